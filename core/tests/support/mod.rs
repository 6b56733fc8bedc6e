pub mod cosine;
pub mod file_weights;
pub mod train_fixture;
