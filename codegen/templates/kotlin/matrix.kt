/**
 * A row-major matrix of floats a verb returns: `rows` rows of `columns` values in [data], which is a view of one
 * `FloatArray` read once from the native result.
 */
data class F32Matrix(
    var data: List<Float>,
    var rows: UInt,
    var columns: UInt,
)
