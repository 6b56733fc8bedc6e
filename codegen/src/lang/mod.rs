//! One module per target language: its formatter (every naming and type-spelling decision for that language)
//! and the askama templates that use it, one per concept.

use crate::model::Api;
use crate::Output;

pub mod c;

pub fn render_all(api: &Api) -> Vec<Output> {
    let mut out = Vec::new();
    out.extend(c::render(api));
    out
}
