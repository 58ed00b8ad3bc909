//! Formulas written once, evaluated two ways.
//!
//! An operator's cost ([`crate::ops`]) is written as ordinary arithmetic over a type `A:`
//! [`Arith`]. With `A = f64` it is the plain computation [`crate::ops::Op::cost`] runs: every
//! constructor is an inlined identity, so the generated code is the f64 expression as written.
//! With `A =` [`Sym`] the same code records the expression on a [`Tape`]: each value keeps its
//! node, so the formula can be printed in symbols (`2·m·n·k`), with the values put in
//! (`2·1·4096·4096`), and beside the value it evaluates to (`33,554,432`), which is the f64
//! result bit for bit, because [`Sym`] computes its value with the same f64 operations in the
//! same order. [`crate::explain`] prints these, so a derivation shows the formula that computed
//! the number.
//!
//! ```
//! use roofline_core::formula::{Arith, Sym, Tape};
//!
//! // One formula, generic over the arithmetic.
//! fn area<A: Arith>(cx: A::Cx, w: u64, h: u64) -> A {
//!     A::num(cx, 2.0) * A::sym(cx, "w", w as f64) * A::sym(cx, "h", h as f64)
//! }
//! assert_eq!(area::<f64>((), 3, 4), 24.0);
//! let tape = Tape::default();
//! let x: Sym = area(&tape, 3, 4);
//! assert_eq!(tape.formula(x), "2·w·h");
//! assert_eq!(tape.substituted(x, &|v| v.to_string()), "2·3·4");
//! assert_eq!(x.value(), 24.0);
//! ```
//!
//! Two kinds of terms exist for the text's sake and are exact in the arithmetic:
//! [`Arith::switch`] (a factor 1 or 0: a bias that is or is not added; 1 drops out of a
//! product, 0 removes its product from a sum) and [`Arith::optional`] (a symbol that is left out
//! of the text when it is 0, as the group-wise scale bytes of an unquantized weight): `x + 0`,
//! `x·1` and `0·x` are exact in IEEE arithmetic for the finite, non-negative values of a cost,
//! so the text without the term evaluates to the same number.

use std::cell::RefCell;
use std::ops::{Add, Div, Mul, Sub};

/// Arithmetic a formula is written in: `f64` to compute, [`Sym`] to record.
///
/// Constructors take a context `Cx`: `()` for `f64`, the [`Tape`] for [`Sym`].
pub trait Arith:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// What the constructors need: nothing for `f64`, the tape that records for [`Sym`].
    type Cx: Copy;
    /// A constant, printed as its value in both the formula and the substitution (`2`).
    fn num(cx: Self::Cx, x: f64) -> Self;
    /// A named value: `name` in the formula, `x` in the substitution (`m` = 4096).
    fn sym(cx: Self::Cx, name: &'static str, x: f64) -> Self;
    /// Like [`Arith::sym`], but when `x` is 0 the term is zero and leaves the text: a sum drops
    /// it, a product containing it drops out of its sum.
    fn optional(cx: Self::Cx, name: &'static str, x: f64) -> Self;
    /// A factor 1 when `on`, else 0, that never shows in the text: `switch·m·n` prints `m·n` when
    /// on and vanishes from its sum when off.
    fn switch(cx: Self::Cx, on: bool) -> Self;
    /// `self`, named `name`: an intermediate quantity derived in a step of its own; later
    /// formulas show `name` in its place.
    fn named(self, name: &'static str) -> Self;
    /// The number.
    fn value(self) -> f64;
}

impl Arith for f64 {
    type Cx = ();
    #[inline(always)]
    fn num(_: (), x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn sym(_: (), _: &'static str, x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn optional(_: (), _: &'static str, x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn switch(_: (), on: bool) -> f64 {
        if on {
            1.0
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn named(self, _: &'static str) -> f64 {
        self
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
}

/// A binary operation of the recorded expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// One node of a recorded expression.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// A term that has left the text (an [`Arith::optional`] at 0, an [`Arith::switch`] off, or
    /// a product with one).
    Zero,
    /// A factor that has left the text (an [`Arith::switch`] on).
    One,
    /// A constant.
    Num(f64),
    /// A named value or a named intermediate quantity.
    Sym(&'static str, f64),
    /// `l op r`, by node index.
    Bin(BinOp, usize, usize),
}

/// A named value of a formula, as recorded: the givens of a derivation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Symbol {
    /// Its name in the formulas (`m`).
    pub name: &'static str,
    /// Its value.
    pub value: f64,
}

/// A named intermediate quantity ([`Arith::named`]) with the expression that defines it.
#[derive(Debug, Clone, Copy)]
pub struct Definition<'t> {
    /// Its name (`P`).
    pub name: &'static str,
    /// The expression it names.
    pub expr: Sym<'t>,
}

/// Where a [`Sym`] expression is recorded: its nodes, the symbols in the order they were made,
/// and the named intermediate quantities in the order they were named.
#[derive(Debug, Default)]
pub struct Tape {
    nodes: RefCell<Vec<Node>>,
    symbols: RefCell<Vec<Symbol>>,
    defined: RefCell<Vec<(&'static str, usize, f64)>>,
}

/// A value recorded on a [`Tape`]: its f64 value and the expression that computed it.
#[derive(Debug, Clone, Copy)]
pub struct Sym<'t> {
    tape: &'t Tape,
    id: usize,
    value: f64,
}

impl Tape {
    fn push(&self, node: Node, value: f64) -> Sym<'_> {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(node);
        Sym {
            tape: self,
            id: nodes.len() - 1,
            value,
        }
    }

    fn node(&self, id: usize) -> Node {
        self.nodes.borrow()[id]
    }

    /// The named values made on this tape, in the order they were made; a name made twice is
    /// listed once, with its first value.
    pub fn symbols(&self) -> Vec<Symbol> {
        let mut out: Vec<Symbol> = Vec::new();
        for s in self.symbols.borrow().iter() {
            if !out.iter().any(|o| o.name == s.name) {
                out.push(*s);
            }
        }
        out
    }

    /// The named intermediate quantities, in the order they were named.
    pub fn definitions(&self) -> Vec<Definition<'_>> {
        self.defined
            .borrow()
            .iter()
            .map(|&(name, id, value)| Definition {
                name,
                expr: Sym {
                    tape: self,
                    id,
                    value,
                },
            })
            .collect()
    }

    /// `x` in symbols (`m·k·a + k·n·b`); constants are printed with `{}` (Rust's shortest
    /// representation that reads back to the same f64).
    pub fn formula(&self, x: Sym<'_>) -> String {
        self.render(x.id, &|n| match n {
            Leaf::Num(v) => format_num(v),
            Leaf::Sym(name, _) => name.to_string(),
        })
    }

    /// `x` with every named value replaced by its number written by `number`
    /// (`1·4096·2 + 4096·4096·2`); constants are written by `number` too.
    pub fn substituted(&self, x: Sym<'_>, number: &dyn Fn(f64) -> String) -> String {
        self.render(x.id, &|n| match n {
            Leaf::Num(v) | Leaf::Sym(_, v) => number(v),
        })
    }

    fn render(&self, id: usize, leaf: &dyn Fn(Leaf) -> String) -> String {
        match self.node(id) {
            // A whole expression that left the text is 0 (a switched-off term on its own).
            Node::Zero => "0".into(),
            Node::One => "1".into(),
            Node::Num(v) => leaf(Leaf::Num(v)),
            Node::Sym(name, v) => leaf(Leaf::Sym(name, v)),
            Node::Bin(op, l, r) => {
                let (ls, rs) = (self.render(l, leaf), self.render(r, leaf));
                let (lp, rp) = (self.prec(l), self.prec(r));
                let wrap = |s: String, yes: bool| if yes { format!("({s})") } else { s };
                match op {
                    BinOp::Add => format!("{ls} + {}", wrap(rs, false)),
                    BinOp::Sub => format!("{ls} − {}", wrap(rs, rp == Prec::Sum)),
                    // A quotient inside a product is bracketed: `(N/G)·k`, never `N/G·k`.
                    BinOp::Mul => format!(
                        "{}·{}",
                        wrap(ls, matches!(lp, Prec::Sum | Prec::Quotient)),
                        wrap(rs, matches!(rp, Prec::Sum | Prec::Quotient))
                    ),
                    BinOp::Div => format!(
                        "{}/{}",
                        wrap(ls, matches!(lp, Prec::Sum | Prec::Quotient)),
                        wrap(rs, rp != Prec::Atom)
                    ),
                }
            }
        }
    }

    fn prec(&self, id: usize) -> Prec {
        match self.node(id) {
            Node::Bin(BinOp::Add | BinOp::Sub, ..) => Prec::Sum,
            Node::Bin(BinOp::Mul, ..) => Prec::Product,
            Node::Bin(BinOp::Div, ..) => Prec::Quotient,
            _ => Prec::Atom,
        }
    }
}

/// What a leaf of the expression is, for rendering.
#[derive(Debug, Clone, Copy)]
enum Leaf {
    Num(f64),
    Sym(&'static str, f64),
}

/// How tightly a node binds, for brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prec {
    Sum,
    Product,
    Quotient,
    Atom,
}

fn format_num(v: f64) -> String {
    format!("{v}")
}

impl<'t> Sym<'t> {
    /// The number (bit for bit the f64 computation).
    pub fn value(self) -> f64 {
        self.value
    }

    fn bin(self, op: BinOp, r: Sym<'t>, value: f64) -> Sym<'t> {
        let t = self.tape;
        let (l, rn) = (t.node(self.id), t.node(r.id));
        // Terms that left the text: 0 drops out of sums and takes products with it, 1 drops
        // out of products and numerators' denominators.
        let id = match (op, l, rn) {
            (BinOp::Add | BinOp::Sub, _, Node::Zero) => return Sym { value, ..self },
            (BinOp::Add, Node::Zero, _) => return Sym { value, ..r },
            (BinOp::Mul, Node::Zero, _) | (BinOp::Mul, _, Node::Zero) => {
                return t.push(Node::Zero, value)
            }
            (BinOp::Div, Node::Zero, _) => return t.push(Node::Zero, value),
            (BinOp::Mul, Node::One, _) => return Sym { value, ..r },
            (BinOp::Mul | BinOp::Div, _, Node::One) => return Sym { value, ..self },
            _ => Node::Bin(op, self.id, r.id),
        };
        t.push(id, value)
    }
}

impl<'t> Add for Sym<'t> {
    type Output = Sym<'t>;
    fn add(self, r: Sym<'t>) -> Sym<'t> {
        self.bin(BinOp::Add, r, self.value + r.value)
    }
}
impl<'t> Sub for Sym<'t> {
    type Output = Sym<'t>;
    fn sub(self, r: Sym<'t>) -> Sym<'t> {
        self.bin(BinOp::Sub, r, self.value - r.value)
    }
}
impl<'t> Mul for Sym<'t> {
    type Output = Sym<'t>;
    fn mul(self, r: Sym<'t>) -> Sym<'t> {
        self.bin(BinOp::Mul, r, self.value * r.value)
    }
}
impl<'t> Div for Sym<'t> {
    type Output = Sym<'t>;
    fn div(self, r: Sym<'t>) -> Sym<'t> {
        self.bin(BinOp::Div, r, self.value / r.value)
    }
}

impl<'t> Arith for Sym<'t> {
    type Cx = &'t Tape;
    fn num(t: &'t Tape, x: f64) -> Self {
        t.push(Node::Num(x), x)
    }
    fn sym(t: &'t Tape, name: &'static str, x: f64) -> Self {
        t.symbols.borrow_mut().push(Symbol { name, value: x });
        t.push(Node::Sym(name, x), x)
    }
    fn optional(t: &'t Tape, name: &'static str, x: f64) -> Self {
        if x == 0.0 {
            t.push(Node::Zero, x)
        } else {
            Self::sym(t, name, x)
        }
    }
    fn switch(t: &'t Tape, on: bool) -> Self {
        if on {
            t.push(Node::One, 1.0)
        } else {
            t.push(Node::Zero, 0.0)
        }
    }
    fn named(self, name: &'static str) -> Self {
        let t = self.tape;
        t.defined.borrow_mut().push((name, self.id, self.value));
        t.push(Node::Sym(name, self.value), self.value)
    }
    fn value(self) -> f64 {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(t: &Tape, x: Sym<'_>) -> (String, String) {
        (t.formula(x), t.substituted(x, &|v| v.to_string()))
    }

    #[test]
    fn brackets_follow_precedence() {
        let t = Tape::default();
        let s = |n, v| Sym::sym(&t, n, v);
        let num = |v| Sym::num(&t, v);
        let (q, l, g, n) = (s("s", 3.0), s("L", 5.0), s("G", 4.0), s("N", 32.0));
        // s·(L − s) + s·(s + 1)/2 = 3·2 + 3·4/2 = 12.
        let p = q * (l - q) + q * (q + num(1.0)) / num(2.0);
        assert_eq!(show(&t, p).0, "s·(L − s) + s·(s + 1)/2");
        assert_eq!(show(&t, p).1, "3·(5 − 3) + 3·(3 + 1)/2");
        assert_eq!(p.value(), 12.0);
        // (N/G)·k: a quotient in a product is bracketed.
        let k = s("k", 128.0);
        let x = n / g * k;
        assert_eq!(show(&t, x).0, "(N/G)·k");
        assert_eq!(x.value(), 32.0 / 4.0 * 128.0);
        // a − (b + c) keeps its brackets, (a + b)·c too.
        let y = l - (q + g);
        assert_eq!(show(&t, y).0, "L − (s + G)");
        assert_eq!(show(&t, (l + q) * g).0, "(L + s)·G");
    }

    #[test]
    fn hidden_terms_leave_the_text_but_not_the_arithmetic() {
        let t = Tape::default();
        let (m, n, b) = (
            Sym::sym(&t, "m", 2.0),
            Sym::sym(&t, "n", 3.0),
            Sym::sym(&t, "b", 0.5),
        );
        let two = Sym::num(&t, 2.0);
        let off = Sym::switch(&t, false);
        let on = Sym::switch(&t, true);
        let x = two * m * n + off * m * n;
        assert_eq!(show(&t, x), ("2·m·n".into(), "2·2·3".into()));
        assert_eq!(x.value(), 12.0);
        let y = two * m * n + on * m * n;
        assert_eq!(show(&t, y), ("2·m·n + m·n".into(), "2·2·3 + 2·3".into()));
        assert_eq!(y.value(), 18.0);
        let zero = Sym::optional(&t, "s_b", 0.0);
        let quarter = Sym::optional(&t, "s_b", 0.25);
        assert_eq!(show(&t, n * (b + zero)).0, "n·b");
        assert_eq!(
            show(&t, n * (b + quarter)),
            ("n·(b + s_b)".into(), "3·(0.5 + 0.25)".into())
        );
        // The value is the f64 computation, identical to the plain expression.
        assert_eq!((n * (b + quarter)).value(), 3.0 * (0.5 + 0.25));
        // Symbols once each, in the order made; a zero optional is no symbol.
        let names: Vec<_> = t.symbols().iter().map(|s| s.name).collect();
        assert_eq!(names, ["m", "n", "b", "s_b"]);
    }

    #[test]
    fn named_quantities_are_recorded_and_shown_by_name() {
        let t = Tape::default();
        let (q, l) = (Sym::sym(&t, "s", 4.0), Sym::sym(&t, "L", 6.0));
        let p = (q * l).named("P");
        let f = Sym::num(&t, 2.0) * p;
        assert_eq!(show(&t, f), ("2·P".into(), "2·24".into()));
        let d = t.definitions();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].name, "P");
        assert_eq!(show(&t, d[0].expr), ("s·L".into(), "4·6".into()));
        assert_eq!(f.value(), 48.0);
    }

    #[test]
    fn f64_is_the_plain_arithmetic() {
        fn f<A: Arith>(cx: A::Cx) -> A {
            let m = A::sym(cx, "m", 3.0);
            A::num(cx, 2.0) * m + A::switch(cx, false) * m + A::optional(cx, "z", 0.0)
        }
        assert_eq!(f::<f64>(()), 6.0);
        let t = Tape::default();
        assert_eq!(f::<Sym>(&t).value(), 6.0);
        assert_eq!(t.formula(f::<Sym>(&t)), "2·m");
    }
}
