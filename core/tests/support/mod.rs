pub mod cosine;
pub mod file_weights;
pub mod fuzz;
pub mod train_fixture;
