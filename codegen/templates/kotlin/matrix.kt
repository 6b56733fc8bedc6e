/**
 * A row-major matrix of floats a verb returns: `rows` rows of `columns` values in [data], one `FloatArray` filled
 * from the native result in one bulk copy (no boxed `Float`). Two matrices are equal when their shapes and values are.
 */
data class F32Matrix(
    var data: FloatArray,
    var rows: UInt,
    var columns: UInt,
) {
    override fun equals(other: Any?): Boolean =
        this === other || (other is F32Matrix && rows == other.rows && columns == other.columns && data.contentEquals(other.data))

    override fun hashCode(): Int = 31 * (31 * rows.hashCode() + columns.hashCode()) + data.contentHashCode()

    override fun toString(): String = "F32Matrix(rows=$rows, columns=$columns, data=[${data.size} floats])"
}
