/**
 * An encoded file's bytes (an image's PNG or JPEG), borrowed for the call: `len` bytes at `data`, read in place
 * and never copied or kept. A NULL `data` with a `len` of 0 is an empty buffer; a NULL `data` with a `len` is an
 * invalid argument naming the element.
 */
typedef struct uform_bytes_t {
    /** The first byte; NULL only when `len` is 0. */
    const uint8_t *data;
    /** Bytes at `data`. */
    size_t len;
} uform_bytes_t;
