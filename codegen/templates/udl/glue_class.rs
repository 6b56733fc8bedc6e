{{ doc }}pub struct {{ name }} {
    core: uform_core::{{ name }},
    /// The handles this one was made from, kept alive as long as it lives (a mesh keeps its executor).
    _borrowed: Vec<Arc<dyn std::any::Any + Send + Sync>>,
}

impl {{ name }} {
{{ members }}
}
{%- if let Some(free) = free %}

/// Closing the Kotlin object or releasing the last Swift reference frees it, as `{{ free }}` does.
impl Drop for {{ name }} {
    fn drop(&mut self) {
        let _ = self.core.{{ free }}();
    }
}
{%- endif %}
