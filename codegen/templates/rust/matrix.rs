/// A row-major matrix of `f32` a verb returns: one row per input, `columns` values each.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct F32Matrix {
    pub data: Vec<f32>,
    pub rows: u32,
    pub columns: u32,
}
