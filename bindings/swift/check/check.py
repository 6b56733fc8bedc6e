"""Checks Swift files where there is no Swift compiler: their syntax, and the rules of the language that the syntax
tree alone decides, with tree-sitter-swift.

usage: check.py FILE.swift...   names file:line:column: RULE: the line, for each problem; exit 1 if any
       check.py --fixtures DIR  checks the checker: every DIR/*.swift says in its first line what it must produce,
                                `// expect: RULE@LINE:COLUMN ...` or `// expect: nothing`; exit 1 on any difference

Rules (each has a fixture under fixtures/ that must fail):
- syntax: an ERROR or MISSING node of the grammar. One known gap of the grammar is masked, narrowly: uniffi's
  `@_documentation(visibility: private)` attribute (an underscored compiler attribute the grammar does not parse)
  is blanked out, character for character, before parsing, so positions stay true. Nothing else is.
- await-in-xctest: `await` anywhere inside the arguments (trailing closures included) of a call named XCTAssert*,
  XCTUnwrap, XCTExpectFailure, XCTSkipIf or XCTSkipUnless. XCTest takes their values as autoclosures of synchronous
  function type (and their closures, such as XCTAssertThrowsError's error handler, are synchronous), and the
  reference says an `await` "can't appear ... in an autoclosure of synchronous function type". Hoist the awaited
  value into a `let` first.
- operator-on-right: `try` or `await` as the right-hand operand of an infix operator. The reference: "A `try`
  expression can't appear on the right-hand side of an infix operator, unless the infix operator is the assignment
  operator or the `try` expression is enclosed in parentheses" (and the same sentence for `await`). Assignments
  (`=`, `+=`: the compiler allows every operator of an assignment precedence group, `&+=` too) and the conditional
  operator `?:` are not checked, nor a parenthesised operand; an operator the grammar has no node for is checked
  only where it is the standard library's and not an assignment (STANDARD_INFIX).
- try-after-await: `await try`. The reference: "If an expression includes both the `try` and `await` operator, the
  `try` operator must appear first."
(The reference's wording is The Swift Programming Language, Expressions: Try Operator and Await Operator.)
"""

import pathlib
import re
import sys

import tree_sitter
import tree_sitter_swift

MASKED = b"@_documentation(visibility: private)"

XCTEST_AUTOCLOSURES = re.compile(r"XCTAssert\w*|XCTUnwrap|XCTExpectFailure|XCTSkipIf|XCTSkipUnless")

# The grammar's infix-operator nodes, with the field that holds the right-hand operand.
INFIX_RIGHT = {
    "additive_expression": "rhs",
    "multiplicative_expression": "rhs",
    "comparison_expression": "rhs",
    "equality_expression": "rhs",
    "conjunction_expression": "rhs",
    "disjunction_expression": "rhs",
    "bitwise_operation": "rhs",
    "infix_expression": "rhs",  # an operator the grammar has no node for; see STANDARD_INFIX
    "nil_coalescing_expression": "if_nil",
    "range_expression": "end",
}

# The grammar parses operators it has no node for, the standard library's `&+` as much as `&+=` or one a package
# declares, as infix_expression. Whether one is an assignment (its precedence group's `assignment: true`) is not in
# the file, so only the standard library's operators whose groups are not assignments are checked.
STANDARD_INFIX = {"&+", "&-", "&*", "&<<", "&>>", "~=", ".==", ".!=", ".<", ".<=", ".>", ".>=", ".&", ".|", ".^"}

PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_swift.language()))


def callee_name(call):
    """The name a call_expression calls: `f` in `f(...)` and in `Module.f(...)`."""
    function = call.children[0]
    if function.type == "navigation_expression":
        suffix = function.child_by_field_name("suffix")
        function = suffix.child_by_field_name("suffix") if suffix is not None else None
    if function is not None and function.type == "simple_identifier":
        return function.text.decode("utf-8")
    return None


def descendants(node, kind):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            yield n
        stack.extend(n.children)


def rule_problems(node):
    """(node, rule, message) for each rule the tree under `node` breaks."""
    found = []
    stack = [node]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        if n.type == "call_expression":
            name = callee_name(n)
            if name and XCTEST_AUTOCLOSURES.fullmatch(name):
                for suffix in (c for c in n.children if c.type == "call_suffix"):
                    for awaited in descendants(suffix, "await_expression"):
                        found.append((awaited, "await-in-xctest",
                                      f"`await` inside the arguments of {name}, which takes them as synchronous "
                                      "autoclosures: hoist the awaited value into a `let` first"))
        elif n.type in INFIX_RIGHT:
            right = n.child_by_field_name(INFIX_RIGHT[n.type])
            operator = n.child_by_field_name("op")
            known = n.type != "infix_expression" or (operator is not None and operator.text.decode() in STANDARD_INFIX)
            if known and right is not None and right.type in ("try_expression", "await_expression"):
                word = "try" if right.type == "try_expression" else "await"
                found.append((right, "operator-on-right",
                              f"`{word}` on the right-hand side of an infix operator: put it first in the "
                              "expression, or in parentheses"))
        elif n.type == "await_expression":
            inner = n.child_by_field_name("expr")
            if inner is not None and inner.type == "try_expression":
                found.append((n, "try-after-await", "`await try`: the `try` operator must appear first"))
    return found


def problems(path):
    """(line, column, rule, message), 1-based, for every problem in the file."""
    source = pathlib.Path(path).read_bytes()
    masked = source.replace(MASKED, b" " * len(MASKED))
    tree = PARSER.parse(masked)
    lines = masked.split(b"\n")
    found = []

    def at(node, rule, message):
        line, byte = node.start_point
        column = len(lines[line][:byte].decode("utf-8", "replace")) + 1
        found.append((line + 1, column, rule, message))

    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            at(node, "syntax", "MISSING " + node.type if node.is_missing else "ERROR")
            continue  # one report per broken region
        if node.has_error:
            stack.extend(node.children)
    for node, rule, message in rule_problems(tree.root_node):
        at(node, rule, message)
    return sorted(found), lines


def check(paths):
    failed = 0
    for path in paths:
        found, lines = problems(path)
        for line, column, rule, message in found:
            text = lines[line - 1].decode("utf-8", "replace").strip()
            print(f"{path}:{line}:{column}: {rule}: {message}: {text[:120]}")
        failed += bool(found)
    if failed:
        print(f"{failed} of {len(paths)} Swift files have problems", file=sys.stderr)
        return 1
    print(f"{len(paths)} Swift files pass the syntax check and its rules")
    return 0


def check_fixtures(folder):
    """Each fixture's first line names what the check must find in it, and nothing else."""
    fixtures = sorted(pathlib.Path(folder).glob("*.swift"))
    failed = []
    rules_failed = set()
    for fixture in fixtures:
        first = fixture.read_text(encoding="utf-8").split("\n", 1)[0]
        if not first.startswith("// expect: "):
            failed.append(f"{fixture}: its first line must be `// expect: RULE@LINE:COLUMN ...` or `// expect: nothing`")
            continue
        words = first.removeprefix("// expect: ").split()
        expected = [] if words == ["nothing"] else sorted(words)
        found, _ = problems(fixture)
        got = sorted(f"{rule}@{line}:{column}" for line, column, rule, _ in found)
        if got != expected:
            failed.append(f"{fixture}: expected {' '.join(expected) or 'nothing'}, the check found {' '.join(got) or 'nothing'}")
        rules_failed.update(word.split("@")[0] for word in expected)
    rules = {"syntax", "await-in-xctest", "operator-on-right", "try-after-await"}
    if rules - rules_failed:
        failed.append(f"no fixture in {folder} must fail with {', '.join(sorted(rules - rules_failed))}")
    for f in failed:
        print(f)
    if failed:
        return 1
    print(f"{len(fixtures)} fixtures: each rule fails where its fixture says, and nowhere else")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fixtures"] and len(sys.argv) == 3:
        sys.exit(check_fixtures(sys.argv[2]))
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    sys.exit(check(sys.argv[1:]))
