//! What each backend can emit. A backend declares the shapes of the model it cannot render (`SUPPORTS` in its
//! `mod.rs`, listed in `lang::BACKENDS`); the checker ([`crate::check`]) rejects an IDL that uses one with
//! `file:line:col` and the backend named, so no generated file ever carries a `compile_error!` or glue that does not
//! build.
//!
//! A record shape concerns every backend (each renders every record); a callable shape concerns a backend only when
//! the callable is offered in one of its languages (`only:`).

use crate::model::*;

/// A shape of the model that some backend cannot render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An input record with a field holding another record.
    RecordInInputRecord,
    /// An input record that some callable returns, with a list field.
    ListInReturnedInputRecord,
    /// An input record that some callable returns, with a field holding a class.
    ClassInReturnedInputRecord,
    /// An optional `f32_matrix` result (`returns_optional: true`).
    OptionalMatrixResult,
    /// An optional result that is not a record, except a string from a call that cannot fail.
    OptionalValueResult,
    /// A `string`, `path`, `gpu_class`, `address` or enum result, except a string from a call that cannot fail: the
    /// result needs converting into its C spelling.
    ConvertedValueResult,
    /// An input record with a `gpu_class` field (or a list of them).
    GpuClassInInputRecord,
    /// An optional output-record field other than a string, a path or a `gpu_class`.
    OptionalValueInOutputRecord,
    /// A parameter that is a list of records.
    ListOfRecordsArgument,
    /// A record parameter with a field named like another parameter, or like a field of another record parameter.
    FieldNamedLikeParameter,
}

impl Shape {
    /// What the shape is, for the diagnostic.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::RecordInInputRecord => "an input record holding a record",
            Shape::ListInReturnedInputRecord => "a list field in an input record that a call returns",
            Shape::ClassInReturnedInputRecord => "a class field in an input record that a call returns",
            Shape::OptionalMatrixResult => "an optional `f32_matrix` result",
            Shape::OptionalValueResult => {
                "an optional result other than a record (or a string from a call that cannot fail)"
            }
            Shape::ConvertedValueResult => {
                "a string, path, gpu_class, address or enum result (other than a string from a call that cannot fail)"
            }
            Shape::GpuClassInInputRecord => "a gpu_class field in an input record",
            Shape::OptionalValueInOutputRecord => {
                "an optional output-record field other than a string, path or gpu_class"
            }
            Shape::ListOfRecordsArgument => "a list of records as a parameter",
            Shape::FieldNamedLikeParameter => {
                "a record parameter whose field is named like another parameter or another record parameter's field \
                 (the fields become keyword arguments)"
            }
        }
    }

    /// The shapes of one callable's parameters, with each parameter's index.
    pub fn of_params(callable: &Callable) -> Vec<(usize, Shape)> {
        let list_of_records = |t: &Type| matches!(t.element(), Some(Type::Record(_)));
        callable
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| list_of_records(&p.ty))
            .map(|(i, _)| (i, Shape::ListOfRecordsArgument))
            .collect()
    }

    /// The record parameters of `callable` whose fields share a name with another parameter, or with a field of
    /// another record parameter, with each one's index; `record` finds a record by name.
    pub fn of_param_names<'a>(
        callable: &Callable,
        record: impl Fn(&Name) -> Option<&'a Record>,
    ) -> Vec<(usize, Shape)> {
        let names: Vec<Vec<String>> = callable
            .params
            .iter()
            .map(|p| match &p.ty {
                Type::Record(r) => {
                    record(r).map(|r| r.fields.iter().map(|f| f.name.snake()).collect()).unwrap_or_default()
                }
                _ => vec![p.name.snake()],
            })
            .collect();
        let clashes =
            |i: usize| names[i].iter().any(|n| names.iter().enumerate().any(|(j, o)| j != i && o.contains(n)));
        callable
            .params
            .iter()
            .enumerate()
            .filter(|(i, p)| matches!(p.ty, Type::Record(_)) && clashes(*i))
            .map(|(i, _)| (i, Shape::FieldNamedLikeParameter))
            .collect()
    }

    /// The shapes of one callable's result.
    pub fn of_result(callable: &Callable) -> Vec<Shape> {
        let mut shapes = Vec::new();
        let Some(ty) = &callable.returns else { return shapes };
        let plain_string = *ty == Type::String && !callable.throws;
        if callable.returns_optional && *ty == Type::F32Matrix {
            shapes.push(Shape::OptionalMatrixResult);
        } else if callable.returns_optional && !matches!(ty, Type::Record(_)) && !plain_string {
            shapes.push(Shape::OptionalValueResult);
        }
        let converted = matches!(ty, Type::String | Type::Path | Type::GpuClass | Type::Address | Type::Enum(_));
        if converted && !plain_string {
            shapes.push(Shape::ConvertedValueResult);
        }
        shapes
    }

    /// The shape of one field of `record`, if it has one; `returned` says whether some callable returns the record.
    pub fn of_field(record: &Record, field: &Field, returned: bool) -> Option<Shape> {
        if record.direction == Direction::Output {
            let plain = matches!(field.ty, Type::String | Type::Path | Type::GpuClass);
            return (field.optional && !plain).then_some(Shape::OptionalValueInOutputRecord);
        }
        match &field.ty {
            Type::Record(_) => Some(Shape::RecordInInputRecord),
            Type::GpuClass => Some(Shape::GpuClassInInputRecord),
            Type::List(e) if **e == Type::GpuClass => Some(Shape::GpuClassInInputRecord),
            Type::List(_) if returned => Some(Shape::ListInReturnedInputRecord),
            Type::Class(_) if returned => Some(Shape::ClassInReturnedInputRecord),
            _ => None,
        }
    }
}

/// The shapes a backend renders: every shape but those it lists.
#[derive(Clone, Copy, Debug)]
pub struct Shapes {
    unsupported: &'static [Shape],
}

impl Shapes {
    /// Every shape.
    pub const ALL: Shapes = Shapes { unsupported: &[] };

    /// Every shape but `unsupported`.
    pub const fn except(unsupported: &'static [Shape]) -> Shapes {
        Shapes { unsupported }
    }

    pub fn supports(&self, shape: Shape) -> bool {
        !self.unsupported.contains(&shape)
    }
}
