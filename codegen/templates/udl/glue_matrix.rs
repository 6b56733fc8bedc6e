/// A row-major matrix of floats a verb returns: `rows` rows of `columns` values in `data`.
#[derive(Clone, Debug, PartialEq)]
pub struct F32Matrix {
    pub data: Vec<f32>,
    pub rows: u32,
    pub columns: u32,
}

impl From<uform_core::F32Matrix> for F32Matrix {
    fn from(value: uform_core::F32Matrix) -> Self {
        F32Matrix { data: value.data, rows: value.rows, columns: value.columns }
    }
}
