{{ banner }}
//
// What the API in UForm.kt stands on, none of it public: the JNI functions of libuform_jni.so (one per callable,
// implemented by generated/jni/glue.rs), the library's loading from the jar, the handle every class holds, and the
// decoder of results that cross as bytes (the layout is `Encode` in bindings/jni/src/runtime.rs).

package {{ package }}

import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle
import java.lang.ref.Cleaner
import java.lang.ref.Reference
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong

/** The JNI functions of the native library, loaded on first use. */
internal object UFormNative {
    init {
        NativeLibrary.load()
    }
{% for f in functions %}
    @JvmStatic external fun {{ f.name }}({{ f.params }}){{ f.returns }}
{%- endfor %}

    /** The overhead benchmark's peer: a JNI function that does nothing (bindings/jni/src/lib.rs). */
    @JvmStatic external fun benchNoop()

    /** The overhead benchmark's matrix: 32 × 384 floats encoded as `encodeText`'s result (bindings/jni/src/lib.rs). */
    @JvmStatic external fun benchMatrix(): ByteArray
}

/**
 * Loads `{{ library }}`: from the path in the system property `uform.library` when set, else from the copy the jar
 * carries under `{{ platform }}/`, written to a private temporary file that is deleted again once loaded (the
 * mapping stays), so nothing is left behind and nothing needs setting up.
 */
internal object NativeLibrary {
    private const val RESOURCE = "/{{ platform }}/{{ library }}"

    fun load() {
        System.getProperty("uform.library")?.let {
            System.load(it)
            return
        }
        val stream = NativeLibrary::class.java.getResourceAsStream(RESOURCE)
            ?: throw UnsatisfiedLinkError("the UForm jar carries no $RESOURCE: no native library for this platform")
        val file = Files.createTempFile("uform-", ".so")
        try {
            stream.use { Files.copy(it, file, StandardCopyOption.REPLACE_EXISTING) }
            System.load(file.toAbsolutePath().toString())
        } finally {
            Files.deleteIfExists(file)
        }
    }
}

/**
 * The native pointer of one object and the count of its users: the object itself (until `close()`) and each call
 * in flight. A call takes a use (or throws `IllegalStateException` once the count reached zero), and the last use
 * to go releases the pointer. The collector's `Cleaner` releases an object nobody closed; it is registered once per
 * object, and a call allocates nothing.
 */
internal class NativeHandle(owner: Any, private val pointer: Long, release: (Long) -> Unit) {
    private val uses = AtomicLong(1)
    private val closed = AtomicBoolean(false)
    private val cleanable = CLEANER.register(owner, Release(pointer, release))

    /** Takes a use of the pointer for one call. */
    fun acquire(owner: Any): Long {
        while (true) {
            val n = uses.get()
            if (n <= 0L) throw IllegalStateException("this ${owner.javaClass.simpleName} was closed")
            if (uses.compareAndSet(n, n + 1)) return pointer
        }
    }

    /** Gives a use back; the last one releases the native object. */
    fun giveBack() {
        if (uses.decrementAndGet() == 0L) cleanable.clean()
    }

    /** Gives the owner's own use back, once. */
    fun close() {
        if (closed.compareAndSet(false, true)) giveBack()
    }

    /** Runs [block] with the pointer, holding a use and keeping [owner] reachable until it returns. */
    inline fun <R> use(owner: Any, block: (Long) -> R): R {
        val pointer = acquire(owner)
        try {
            return block(pointer)
        } finally {
            giveBack()
            Reference.reachabilityFence(owner)
        }
    }

    /** The cleaning action: holds the pointer, never the owner. */
    private class Release(private val pointer: Long, private val release: (Long) -> Unit) : Runnable {
        override fun run() = release(pointer)
    }

    companion object {
        private val CLEANER: Cleaner = Cleaner.create()
    }
}

/** Runs [block] with [handle]'s pointer held for the call, or with 0 when [owner] is null: an absent optional handle. */
internal inline fun <R> useOptional(owner: Any?, handle: NativeHandle?, block: (Long) -> R): R =
    if (owner == null || handle == null) block(0L) else handle.use(owner, block)

/**
 * Reads a quiet word (see `Executor.quiet` in core) with acquire ordering, as the core publishes it: while it holds
 * what a call's `…Quiet` function says, the call would change nothing and is skipped.
 */
internal object QuietWord {
    private val WORD: VarHandle = MethodHandles.byteBufferViewVarHandle(IntArray::class.java, ByteOrder.nativeOrder())

    fun read(buffer: ByteBuffer): Int = WORD.getAcquire(buffer, 0) as Int
}

/** Decodes a result that crossed as bytes: little-endian, strings and lists prefixed with their length. */
internal class Reader(private val bytes: ByteArray) {
    private val buffer: ByteBuffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)

    fun u32(): UInt = buffer.int.toUInt()
    fun i32(): Int = buffer.int
    fun u64(): ULong = buffer.long.toULong()
    fun f64(): Double = buffer.double
    fun bool(): Boolean = buffer.get() != 0.toByte()
    fun present(): Boolean = bool()

    fun string(): String {
        val length = buffer.int
        val text = String(bytes, buffer.position(), length, Charsets.UTF_8)
        buffer.position(buffer.position() + length)
        return text
    }

    inline fun <T> optional(read: Reader.() -> T): T? = if (present()) read() else null

    inline fun <T> list(read: Reader.() -> T): List<T> {
        val size = u32().toInt()
        return List(size) { read() }
    }
{%- if matrix %}

    fun matrix(): F32Matrix {
        val rows = u32()
        val columns = u32()
        val data = FloatArray(Math.multiplyExact(rows.toInt(), columns.toInt()))
        buffer.asFloatBuffer().get(data)
        buffer.position(buffer.position() + data.size * 4)
        return F32Matrix(data, rows, columns)
    }
{%- endif %}
{%- if doubles %}

    fun doubles(): DoubleArray {
        val values = DoubleArray(u32().toInt())
        buffer.asDoubleBuffer().get(values)
        buffer.position(buffer.position() + values.size * 8)
        return values
    }
{%- endif %}
}

internal fun uints(values: List<UInt>): IntArray = IntArray(values.size) { values[it].toInt() }

internal fun ulongs(values: List<ULong>): LongArray = LongArray(values.size) { values[it].toLong() }

internal fun ordinals(values: List<Enum<*>>): IntArray = IntArray(values.size) { values[it].ordinal }
{%- for r in readers %}

{{ r }}
{%- endfor %}
