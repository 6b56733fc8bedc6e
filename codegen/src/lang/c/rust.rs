use crate::{model::Api, Output}; pub fn render(_api: &Api) -> Vec<Output> { Vec::new() }
