/**
 * A row-major matrix of floats a verb returns: `rows` rows of `columns` values at `data` (NULL when there are no
 * rows). The caller owns it: it stays valid after the model and the executor are freed, until
 * `uform_f32_matrix_free`.
 */
typedef struct uform_f32_matrix_t {
    /** `rows * columns` floats, row after row. */
    const float *data;
    /** Rows, one per input. */
    size_t rows;
    /** Values per row. */
    size_t columns;
} uform_f32_matrix_t;

/** Frees a matrix a verb returned and zeroes it; NULL, a zeroed matrix and a second free do nothing. */
void uform_f32_matrix_free(uform_f32_matrix_t *matrix);
