//! The checked, language-neutral model every backend renders from. Nothing here knows any language's spelling:
//! names are word lists, types are IDL types, doc text is segments with resolved references.

/// A name as a list of lower-case words; each language's formatter joins them its own way.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name {
    words: Vec<String>,
}

impl Name {
    /// Splits `snake_case`, `PascalCase` or `camelCase` into words.
    pub fn parse(text: &str) -> Name {
        let mut words = Vec::new();
        let mut current = String::new();
        let chars: Vec<char> = text.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if c == '_' || c == '-' {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
                continue;
            }
            let boundary = c.is_ascii_uppercase()
                && !current.is_empty()
                && (chars[i - 1].is_ascii_lowercase()
                    || chars[i - 1].is_ascii_digit()
                    || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
            if boundary {
                words.push(std::mem::take(&mut current));
            }
            current.push(c.to_ascii_lowercase());
        }
        if !current.is_empty() {
            words.push(current);
        }
        Name { words }
    }
    pub fn words(&self) -> &[String] {
        &self.words
    }
    /// `host_domain_index`
    pub fn snake(&self) -> String {
        self.words.join("_")
    }
    /// `HOST_DOMAIN_INDEX`
    pub fn screaming(&self) -> String {
        self.snake().to_ascii_uppercase()
    }
    /// `HostDomainIndex`
    pub fn pascal(&self) -> String {
        self.words.iter().map(|w| capitalize(w)).collect()
    }
    /// `hostDomainIndex`
    pub fn camel(&self) -> String {
        let mut out = String::new();
        for (i, w) in self.words.iter().enumerate() {
            if i == 0 {
                out.push_str(w);
            } else {
                out.push_str(&capitalize(w));
            }
        }
        out
    }
    /// `host-domain-index`
    pub fn kebab(&self) -> String {
        self.words.join("-")
    }
}

fn capitalize(word: &str) -> String {
    let mut c = word.chars();
    match c.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// An IDL type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    U32,
    U64,
    I32,
    F64,
    Bool,
    String,
    /// A file-system path; crosses as UTF-8 bytes.
    Path,
    /// A native address (a stream, a pool): 64 bits, unsigned.
    Address,
    /// A GPU class: its name in the bindings, its table id in C.
    GpuClass,
    /// A row-major matrix of 32-bit floats a verb returns (rows × columns): each language's native numeric array,
    /// handed over without a copy where the language allows. Only ever a callable's result.
    F32Matrix,
    /// An encoded file's bytes (an image's PNG or JPEG), borrowed for the call. Only ever the element of a list
    /// parameter (`list<bytes>`): each language's natural byte buffer, read without a copy where the language allows.
    Bytes,
    List(Box<Type>),
    Record(Name),
    Enum(Name),
    Class(Name),
}

/// The type as the IDL spells it (`list<u32>`, `MeshOptions`), for messages.
impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Type::U32 => f.write_str("u32"),
            Type::U64 => f.write_str("u64"),
            Type::I32 => f.write_str("i32"),
            Type::F64 => f.write_str("f64"),
            Type::Bool => f.write_str("bool"),
            Type::String => f.write_str("string"),
            Type::Path => f.write_str("path"),
            Type::F32Matrix => f.write_str("f32_matrix"),
            Type::Bytes => f.write_str("bytes"),
            Type::Address => f.write_str("address"),
            Type::GpuClass => f.write_str("gpu_class"),
            Type::List(t) => write!(f, "list<{t}>"),
            Type::Record(n) | Type::Enum(n) | Type::Class(n) => f.write_str(&n.pascal()),
        }
    }
}

impl Type {
    pub fn is_integer(&self) -> bool {
        matches!(self, Type::U32 | Type::U64 | Type::I32 | Type::Address)
    }
    /// The inclusive range an integer literal of this type must fall in.
    pub fn integer_range(&self) -> Option<(i128, i128)> {
        match self {
            Type::U32 => Some((0, u32::MAX as i128)),
            Type::U64 | Type::Address => Some((0, u64::MAX as i128)),
            Type::I32 => Some((i32::MIN as i128, i32::MAX as i128)),
            _ => None,
        }
    }
    /// Whether the type is or holds [`Type::Bytes`].
    pub fn holds_bytes(&self) -> bool {
        match self {
            Type::Bytes => true,
            Type::List(e) => e.holds_bytes(),
            _ => false,
        }
    }
    /// The element type of a list.
    pub fn element(&self) -> Option<&Type> {
        match self {
            Type::List(inner) => Some(inner),
            _ => None,
        }
    }
}

/// A literal default value.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Integer(i128),
    Float(f64),
    Bool(bool),
    String(String),
    /// An enum value, by its variant name.
    Variant(Name),
    /// `{}`: a record with every field absent.
    EmptyRecord,
}

/// Doc text with references resolved to what they name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Doc {
    pub segments: Vec<DocSegment>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DocSegment {
    Text(String),
    Ref(Reference),
}

/// What a `[[…]]` in doc text names.
#[derive(Clone, Debug, PartialEq)]
pub enum Reference {
    /// A field of the same record or a parameter of the same callable.
    Member(Name),
    Type(Name),
    Function(Name),
    Method {
        class: Name,
        method: Name,
    },
}

impl Doc {
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
    /// Renders the text, spelling every reference with `spell`.
    pub fn render(&self, spell: &dyn Fn(&Reference) -> String) -> String {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                DocSegment::Text(t) => out.push_str(t),
                DocSegment::Ref(r) => out.push_str(&spell(r)),
            }
        }
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Passed into calls: every field may be absent; C zero-initialisation means "all absent".
    Input,
    /// Returned from calls.
    Output,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: Name,
    pub ty: Type,
    pub optional: bool,
    pub default: Option<Literal>,
    /// The version that appended it to an input record's C struct; `None` for the fields of the first layout,
    /// the one a C caller's `struct_size` of 0 names.
    pub since: Option<String>,
    pub doc: Doc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub name: Name,
    pub c_name: String,
    pub direction: Direction,
    /// The native layer's twin, whose string-enum fields cross as plain strings (TypeScript `Compiled*`).
    pub compiled: Option<Name>,
    pub doc: Doc,
    pub fields: Vec<Field>,
    /// The reference page it is documented on.
    pub page: Name,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnumValue {
    Number(i64),
    String(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub name: Name,
    pub value: EnumValue,
    /// Position in declaration order: the C value of string-valued enums.
    pub ordinal: usize,
    pub doc: Doc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Enum {
    pub name: Name,
    pub c_name: String,
    pub doc: Doc,
    pub variants: Vec<Variant>,
    /// The reference page it is documented on.
    pub page: Name,
}

impl Enum {
    pub fn is_string(&self) -> bool {
        self.variants.iter().any(|v| matches!(v.value, EnumValue::String(_)))
    }
    /// The number C and the native layers use for a variant.
    pub fn number(&self, v: &Variant) -> i64 {
        match v.value {
            EnumValue::Number(n) => n,
            EnumValue::String(_) => v.ordinal as i64,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Name,
    pub ty: Type,
    pub default: Option<Literal>,
    pub doc: Doc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallableKind {
    Function,
    Constructor,
    Method,
    /// Frees the handle; idempotent.
    Free,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    C,
    TypeScript,
    Python,
    Kotlin,
    Swift,
}

impl Language {
    pub fn parse(text: &str) -> Option<Language> {
        match text {
            "c" => Some(Language::C),
            "typescript" | "javascript" | "js" => Some(Language::TypeScript),
            "python" => Some(Language::Python),
            "kotlin" => Some(Language::Kotlin),
            "swift" => Some(Language::Swift),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Callable {
    pub name: Name,
    pub c_name: String,
    pub kind: CallableKind,
    pub doc: Doc,
    pub params: Vec<Param>,
    pub returns: Option<Type>,
    pub returns_optional: bool,
    pub throws: bool,
    /// Waits on other threads or processes: bindings release their interpreter lock around it.
    pub blocking: bool,
    /// The core's `try_<name>` finishes the call without blocking when it can (`None` when it would have to wait):
    /// bindings that release a lock around blocking calls try it first and release the lock only to wait.
    pub try_first: bool,
    /// The result never changes while the process runs: bindings compute it once and hand out the same value.
    pub constant: bool,
    /// A long call (it waits up to a timeout or reads a file) that languages with a native async form also offer
    /// asynchronously, run off the caller's thread: Swift's `async throws` (the blocking form stays in the others).
    pub is_async: bool,
    /// For an async twin (see [`Callable::async_twin`]), the name of the blocking call it runs; never set in the
    /// IDL, only by a backend's view.
    pub twin_of: Option<Name>,
    /// The languages that offer it; `None` for all.
    pub only: Option<Vec<Language>>,
    /// The reference page it is documented on (a member's is its class's unless it names its own).
    pub page: Name,
}

impl Callable {
    pub fn offered_in(&self, language: Language) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(&language))
    }

    /// The async twin of a long call (`is_async`), for a backend whose async form is a member of its own (Node's
    /// Promise-returning `…Async`, Swift's `async throws` through the UDL): the same parameters, result and doc,
    /// named `<name>_async`, remembering the blocking call it runs.
    pub fn async_twin(&self) -> Callable {
        let mut twin = self.clone();
        twin.name = Name::parse(&format!("{}_async", self.name.snake()));
        twin.twin_of = Some(self.name.clone());
        twin
    }

    /// Whether this is an async twin.
    pub fn is_twin(&self) -> bool {
        self.twin_of.is_some()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    pub name: Name,
    pub c_name: String,
    pub doc: Doc,
    pub details: Doc,
    pub thread_safety: Doc,
    pub compiled: Name,
    pub compiled_doc: Doc,
    pub members: Vec<Callable>,
    /// A short runnable snippet per language, shown in its reference section.
    pub examples: Vec<(Language, String)>,
    /// The reference page it is documented on.
    pub page: Name,
}

impl Class {
    pub fn constructors(&self) -> impl Iterator<Item = &Callable> {
        self.members.iter().filter(|m| m.kind == CallableKind::Constructor)
    }
    pub fn methods(&self) -> impl Iterator<Item = &Callable> {
        self.members.iter().filter(|m| m.kind != CallableKind::Constructor)
    }
    /// The example in `language`, if the IDL gives one.
    pub fn example(&self, language: Language) -> Option<&str> {
        self.examples.iter().find(|(l, _)| *l == language).map(|(_, e)| e.as_str())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorKindDef {
    pub name: Name,
    /// The C status value; success is 0.
    pub status: u32,
    pub doc: Doc,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Record(Record),
    Enum(Enum),
    Class(Class),
    Function(Callable),
}

impl Item {
    pub fn name(&self) -> &Name {
        match self {
            Item::Record(r) => &r.name,
            Item::Enum(e) => &e.name,
            Item::Class(c) => &c.name,
            Item::Function(f) => &f.name,
        }
    }
    /// The reference page the item is documented on (a class's members may name others).
    pub fn page(&self) -> &Name {
        match self {
            Item::Record(r) => &r.page,
            Item::Enum(e) => &e.page,
            Item::Class(c) => &c.page,
            Item::Function(f) => &f.page,
        }
    }
}

/// A page of the reference: a group of items (and class members) documented together, in its own file.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// One PascalCase word; the file is its lowercase (`Executors`, `executors.md`).
    pub name: Name,
    /// What the page covers: its line in the index.
    pub doc: Doc,
    /// Shown under the page's title.
    pub intro: Doc,
}

/// The whole checked interface.
#[derive(Clone, Debug, PartialEq)]
pub struct Api {
    pub package: String,
    pub version: String,
    pub title: String,
    pub doc: Doc,
    pub intro: Doc,
    /// The reference's pages, in order; every item and member is on one of them.
    pub pages: Vec<Page>,
    pub errors: Vec<ErrorKindDef>,
    pub items: Vec<Item>,
}

impl Api {
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.items.iter().filter_map(|i| if let Item::Record(r) = i { Some(r) } else { None })
    }
    pub fn enums(&self) -> impl Iterator<Item = &Enum> {
        self.items.iter().filter_map(|i| if let Item::Enum(e) = i { Some(e) } else { None })
    }
    pub fn classes(&self) -> impl Iterator<Item = &Class> {
        self.items.iter().filter_map(|i| if let Item::Class(c) = i { Some(c) } else { None })
    }
    pub fn functions(&self) -> impl Iterator<Item = &Callable> {
        self.items.iter().filter_map(|i| if let Item::Function(f) = i { Some(f) } else { None })
    }
    pub fn record(&self, name: &Name) -> Option<&Record> {
        self.records().find(|r| &r.name == name)
    }
    pub fn enumeration(&self, name: &Name) -> Option<&Enum> {
        self.enums().find(|e| &e.name == name)
    }
    pub fn class(&self, name: &Name) -> Option<&Class> {
        self.classes().find(|c| &c.name == name)
    }
    /// Every callable: the free functions, then each class's members.
    pub fn callables(&self) -> impl Iterator<Item = &Callable> {
        self.functions().chain(self.classes().flat_map(|k| k.members.iter()))
    }
    /// Whether some callable takes a `list<bytes>`, so the builtin byte-buffer type must be declared.
    pub fn takes_bytes(&self) -> bool {
        self.callables().any(|c| c.params.iter().any(|p| p.ty.holds_bytes()))
    }
    /// Whether some callable returns an [`Type::F32Matrix`], so the builtin matrix type must be declared.
    pub fn returns_matrix(&self) -> bool {
        self.callables().any(|c| c.returns == Some(Type::F32Matrix))
    }
}

#[cfg(test)]
mod tests {
    use super::Name;

    #[test]
    fn names_split_and_join() {
        let n = Name::parse("host_domain_index");
        assert_eq!(n.camel(), "hostDomainIndex");
        assert_eq!(n.pascal(), "HostDomainIndex");
        assert_eq!(Name::parse("GpuVendor").snake(), "gpu_vendor");
        assert_eq!(Name::parse("CompiledMeshDescription").screaming(), "COMPILED_MESH_DESCRIPTION");
        assert_eq!(Name::parse("forRam").snake(), "for_ram");
        assert_eq!(Name::parse("IOError").words(), ["io", "error"]);
    }
}
