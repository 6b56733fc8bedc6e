// The test suites' JSON reader: the fixtures are JSON, and the tests depend on nothing beyond JUnit.

package cloud.unum.uform

import java.io.File

/** A small JSON reader, enough for the fixture: objects, arrays, strings, numbers, booleans and null. */
internal class Json(private val text: String) {
    private var i = 0

    fun parse(): Any? = value().also { space() }

    private fun space() {
        while (i < text.length && text[i].isWhitespace()) i++
    }

    private fun value(): Any? {
        space()
        return when (val c = text[i]) {
            '{' -> {
                i++
                val map = LinkedHashMap<String, Any?>()
                space()
                if (text[i] == '}') i++ else do {
                    space()
                    val key = string()
                    space()
                    check(text[i++] == ':')
                    map[key] = value()
                    space()
                } while (text[i++] == ',')
                map
            }
            '[' -> {
                i++
                val list = ArrayList<Any?>()
                space()
                if (text[i] == ']') i++ else do {
                    list.add(value())
                    space()
                } while (text[i++] == ',')
                list
            }
            '"' -> string()
            't' -> { i += 4; true }
            'f' -> { i += 5; false }
            'n' -> { i += 4; null }
            else -> {
                val start = i
                while (i < text.length && (text[i].isDigit() || text[i] in "+-.eE")) i++
                check(i > start) { "unexpected '$c' at $start" }
                text.substring(start, i).toDouble()
            }
        }
    }

    private fun string(): String {
        check(text[i++] == '"')
        val sb = StringBuilder()
        while (text[i] != '"') {
            if (text[i] == '\\') {
                i++
                when (val e = text[i]) {
                    'n' -> sb.append('\n')
                    't' -> sb.append('\t')
                    'r' -> sb.append('\r')
                    'b' -> sb.append('\b')
                    'f' -> sb.append('\u000c')
                    'u' -> { sb.append(text.substring(i + 1, i + 5).toInt(16).toChar()); i += 4 }
                    else -> sb.append(e)
                }
            } else sb.append(text[i])
            i++
        }
        i++
        return sb.toString()
    }
}

/** The JSON object in the file at `path`: a fixture's top level. */
@Suppress("UNCHECKED_CAST")
internal fun readJsonObject(path: String): Map<String, Any?> = Json(File(path).readText()).parse() as Map<String, Any?>
