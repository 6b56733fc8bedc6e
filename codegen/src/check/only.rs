//! Languages: `only:` lists, exact per language.

use super::Checker;
use crate::model::*;
use crate::raw::*;

impl Checker {
    /// The languages an `only:` list names; an unknown one is a problem.
    pub(super) fn only(&mut self, only: Option<&Vec<S<String>>>, id: &str) -> Option<Vec<Language>> {
        only.map(|langs| {
            langs
                .iter()
                .filter_map(|l| {
                    let lang = Language::parse(&l.value);
                    if lang.is_none() {
                        self.problem(
                            &l.referenced,
                            id,
                            format!(
                                "`only` names unknown language `{}` (c, typescript, python, kotlin, swift)",
                                l.value
                            ),
                        );
                    }
                    lang
                })
                .collect()
        })
    }
}
