impl Encode for uform_core::{{ name }} {
    fn encode(&self, out: &mut Vec<u8>) {
{%- for f in fields %}
        self.{{ f }}.encode(out);
{%- endfor %}
    }
}
