/// The core handles of every live `{{ compiled }}`, by number.
static {{ handles }}: Handles<uform_core::{{ core }}> = Handles::new();

/// The native layer's {{ name }}: the core handle behind the wrapper's `{{ name }}`.
#[napi]
pub struct {{ compiled }} {
    inner: uform_core::{{ core }},
    handle: u32,
}

impl Drop for {{ compiled }} {
    fn drop(&mut self) {
        {{ handles }}.remove(self.handle);
    }
}

#[napi]
impl {{ compiled }} {
{%- for m in members %}
{{ m }}
{%- endfor %}
    /// The number the wrapper passes to the plain functions behind the methods.
    #[napi(getter, js_name = "handle")]
    pub fn handle(&self) -> u32 {
        self.handle
    }
}
{%- for f in fast %}

{{ f }}
{%- endfor %}
