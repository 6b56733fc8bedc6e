/**
 * A row-major matrix of floats a verb returns: `rows` rows of `columns` values in `data`, the native result's own
 * buffer (no copy). It stays valid after the model and the executor are freed.
 */
export interface F32Matrix {
    /** `rows * columns` values, row after row; row `i` is `data.subarray(i * columns, (i + 1) * columns)`. */
    readonly data: Float32Array;
    /** Rows, one per input. */
    readonly rows: number;
    /** Values per row. */
    readonly columns: number;
}
