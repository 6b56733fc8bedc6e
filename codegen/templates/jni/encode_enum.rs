impl Encode for uform_core::{{ name }} {
    fn encode(&self, out: &mut Vec<u8>) {
        runtime::ordinal(&uform_core::{{ name }}::ALL, self).encode(out);
    }
}
