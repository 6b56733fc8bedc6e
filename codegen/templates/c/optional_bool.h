{{ doc }}
typedef uint8_t uform_optional_bool_t;

/** The field is absent: its default applies. */
#define UFORM_ABSENT ((uform_optional_bool_t)0)
/** The field is true; C's `true` is the same value. */
#define UFORM_TRUE ((uform_optional_bool_t)1)
/** The field is false. */
#define UFORM_FALSE ((uform_optional_bool_t)2)
