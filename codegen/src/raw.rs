//! The IDL file as written: serde structures with source positions, before any checking.

use serde::Deserialize;
use serde_saphyr::Spanned;

pub type S<T> = Spanned<T>;

/// Declares a raw struct whose keys end with those of a call: a function item and a class member spell their
/// parameters, result and flags the same way (the checker reads both through `check::callables::source!`). The keys
/// stay plain fields, last in the order written, so that an unknown key is still refused with the full list of expected
/// ones (`#[serde(flatten)]` would share them as a struct, but does not go with `deny_unknown_fields`).
macro_rules! with_call_keys {
    ($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($fields)*
            pub params: Option<Vec<RawParam>>,
            pub returns: Option<S<String>>,
            pub returns_optional: Option<S<bool>>,
            pub throws: Option<S<bool>>,
            pub blocking: Option<S<bool>>,
            pub try_first: Option<S<bool>>,
            pub constant: Option<S<bool>>,
            #[serde(rename = "async")]
            pub is_async: Option<S<bool>>,
            pub only: Option<Vec<S<String>>>,
        }
    };
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub package: S<String>,
    pub version: S<String>,
    pub title: S<String>,
    pub doc: Option<S<String>>,
    pub intro: Option<S<String>>,
    /// The reference's pages, in order; each item names its own with `page:`.
    pub pages: Option<Vec<RawPage>>,
    #[serde(default)]
    pub errors: Vec<RawError>,
    #[serde(default)]
    pub items: Vec<RawItem>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPage {
    pub page: S<String>,
    pub doc: Option<S<String>>,
    pub intro: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawError {
    pub error: S<String>,
    pub doc: Option<S<String>>,
}

with_call_keys! {
    /// One item; exactly one of `record`, `enum`, `class`, `function` names it.
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct RawItem {
        pub record: Option<S<String>>,
        #[serde(rename = "enum")]
        pub enumeration: Option<S<String>>,
        pub class: Option<S<String>>,
        pub function: Option<S<String>>,
        pub c: Option<S<String>>,
        pub doc: Option<S<String>>,
        /// The reference page the item is documented on.
        pub page: Option<S<String>>,
        // records
        pub direction: Option<S<String>>,
        pub compiled: Option<S<String>>,
        pub fields: Option<Vec<RawField>>,
        // enums
        pub values: Option<Vec<RawVariant>>,
        // classes
        pub details: Option<S<String>>,
        pub thread_safety: Option<S<String>>,
        pub compiled_doc: Option<S<String>>,
        pub members: Option<Vec<RawMember>>,
        /// A short runnable snippet per language (`javascript`, `python`, `c`, `kotlin`, `swift`).
        pub example: Option<S<std::collections::BTreeMap<String, String>>>,
        // functions: the call keys, added by `with_call_keys!`
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawField {
    pub name: S<String>,
    #[serde(rename = "type")]
    pub ty: S<String>,
    pub optional: Option<S<bool>>,
    pub default: Option<S<RawLiteral>>,
    /// The version that appended this field to an input record's C struct (absent: in its first layout).
    pub since: Option<S<String>>,
    pub doc: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: S<String>,
    pub value: S<RawLiteral>,
    pub doc: Option<S<String>>,
}

with_call_keys! {
    /// One member of a class; exactly one of `constructor`, `method`, `free` names it.
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct RawMember {
        pub constructor: Option<S<String>>,
        pub method: Option<S<String>>,
        pub free: Option<S<String>>,
        pub c: Option<S<String>>,
        pub doc: Option<S<String>>,
        /// The reference page the member is documented on, when not its class's.
        pub page: Option<S<String>>,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    pub name: S<String>,
    #[serde(rename = "type")]
    pub ty: S<String>,
    pub default: Option<S<RawLiteral>>,
    pub doc: Option<S<String>>,
}

/// A literal as YAML spells it; the checker decides whether it fits its type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RawLiteral {
    Bool(bool),
    Integer(i64),
    Unsigned(u64),
    Float(f64),
    String(String),
    Map(std::collections::BTreeMap<String, String>),
    List(Vec<String>),
    /// Never parsed: the checker's widened integer.
    #[serde(skip)]
    Integer128(i128),
}
