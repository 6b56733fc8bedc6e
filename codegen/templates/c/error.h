/** The outcome of every call that can fail: zero is success; each error kind, the same set in every language, has its own value. */
typedef enum uform_status_t {
    /** The call succeeded. */
    UFORM_STATUS_OK = 0,
{%- for e in errors %}
{{ e.doc }}    {{ e.name }} = {{ e.value }},
{%- endfor %}
} uform_status_t;

/**
 * The message of the calling thread's last failed call, naming the argument and the value; an empty string when
 * no call failed on this thread yet. Valid until the thread's next call into UForm.
 */
const char *uform_last_error_message(void);

/** The kind of a status as every language spells it, like "invalid_argument"; NULL for a value outside the enum. */
const char *uform_status_name(uform_status_t status);
