pub mod file_weights;
