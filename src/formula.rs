//! A CNF formula in a flat, cache-friendly layout, with its independent support.

/// A DIMACS literal: `v` is variable `v` true, `-v` is it false. Variables count from 1.
pub type Lit = i32;

/// The variable of a literal, counted from 0, as used to index assignments.
#[inline]
pub fn var_index(lit: Lit) -> usize {
    lit.unsigned_abs() as usize - 1
}

/// The index of a literal in per-literal tables (watch lists, occurrence lists, values):
/// `2v` for variable `v` (from 0) true, `2v + 1` for it false.
#[inline]
pub fn literal_index(lit: Lit) -> usize {
    2 * var_index(lit) + usize::from(lit < 0)
}

/// The literal setting variable `var` (from 0) to `value`.
pub fn literal(var: usize, value: bool) -> Lit {
    let v = var as Lit + 1;
    if value {
        v
    } else {
        -v
    }
}

/// Clauses are stored back to back in one vector so that a full check walks memory in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cnf {
    num_vars: usize,
    literals: Vec<Lit>,
    /// `starts[i]..starts[i + 1]` is clause `i` in `literals`.
    starts: Vec<usize>,
    /// Variables (from 1) named by `c ind` (or `c p show`) lines; empty when none were given.
    independent: Vec<u32>,
}

impl Cnf {
    /// An empty formula over `num_vars` variables.
    pub fn new(num_vars: usize) -> Self {
        Cnf {
            num_vars,
            literals: Vec::new(),
            starts: vec![0],
            independent: Vec::new(),
        }
    }

    /// Builds a formula from clauses; every literal must lie within `num_vars`.
    pub fn from_clauses<C: AsRef<[Lit]>>(num_vars: usize, clauses: &[C]) -> Self {
        let mut cnf = Cnf::new(num_vars);
        for clause in clauses {
            cnf.add_clause(clause.as_ref());
        }
        cnf
    }

    /// Appends a clause. Panics on a literal out of range: callers validate input first.
    pub fn add_clause(&mut self, clause: &[Lit]) {
        assert!(
            clause
                .iter()
                .all(|&l| l != 0 && var_index(l) < self.num_vars),
            "literal out of range in {clause:?}"
        );
        self.literals.extend_from_slice(clause);
        self.starts.push(self.literals.len());
    }

    /// Variables, numbered 1 to this.
    pub fn num_vars(&self) -> usize {
        self.num_vars
    }

    /// Clauses.
    pub fn num_clauses(&self) -> usize {
        self.starts.len() - 1
    }

    /// Literal occurrences, over all clauses.
    pub fn num_literals(&self) -> usize {
        self.literals.len()
    }

    /// Clause `i`.
    #[inline]
    pub fn clause(&self, i: usize) -> &[Lit] {
        &self.literals[self.starts[i]..self.starts[i + 1]]
    }

    /// The clauses, in file order.
    pub fn clauses(&self) -> impl ExactSizeIterator<Item = &[Lit]> + '_ {
        (0..self.num_clauses()).map(move |i| self.clause(i))
    }

    /// The independent support as given in the file (variables from 1), possibly empty.
    pub fn independent_support(&self) -> &[u32] {
        &self.independent
    }

    /// Per variable (from 0): in the independent support (none when the file names none).
    pub fn support_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.num_vars];
        for &v in &self.independent {
            mask[v as usize - 1] = true;
        }
        mask
    }

    /// The variables (from 0) that diversity is measured on: the independent support when the
    /// file names one, every variable otherwise.
    pub fn projection(&self) -> Vec<usize> {
        if self.independent.is_empty() {
            (0..self.num_vars).collect()
        } else {
            self.independent.iter().map(|&v| v as usize - 1).collect()
        }
    }

    /// A 64-bit FNV-1a hash of the variable count, clauses and independent support, stable
    /// across builds and machines: ranks compare it to be sure they sample the same formula.
    pub fn fingerprint(&self) -> u64 {
        const PRIME: u64 = 0x0000_0100_0000_01B3;
        let mut hash = 0xCBF2_9CE4_8422_2325u64;
        let mut feed = |word: u64| {
            for byte in word.to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
            }
        };
        feed(self.num_vars as u64);
        for clause in self.clauses() {
            clause.iter().for_each(|&l| feed(l as u64));
            feed(0);
        }
        self.independent.iter().for_each(|&v| feed(u64::from(v)));
        hash
    }

    /// Sets the independent support; every variable must lie within `num_vars`.
    pub fn set_independent_support(&mut self, vars: Vec<u32>) {
        assert!(vars
            .iter()
            .all(|&v| v >= 1 && (v as usize) <= self.num_vars));
        self.independent = vars;
    }

    /// For each variable (from 0), the clauses it occurs in, in clause order.
    pub fn occurrence_lists(&self) -> Vec<Vec<u32>> {
        let mut occurs = vec![Vec::new(); self.num_vars];
        for (i, clause) in self.clauses().enumerate() {
            for &lit in clause {
                let list = &mut occurs[var_index(lit)];
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
        }
        occurs
    }

    /// The formula's parts that share no variable: the models of the whole are the
    /// combinations of the parts' models.
    pub fn components(&self) -> Components {
        let mut parent: Vec<u32> = (0..self.num_vars as u32).collect();
        let root = |parent: &mut Vec<u32>, mut v: u32| {
            while parent[v as usize] != v {
                let up = parent[parent[v as usize] as usize];
                parent[v as usize] = up;
                v = up;
            }
            v
        };
        for clause in self.clauses() {
            let Some(&first) = clause.first() else {
                continue;
            };
            let r = root(&mut parent, var_index(first) as u32);
            for &lit in &clause[1..] {
                let s = root(&mut parent, var_index(lit) as u32);
                if s != r {
                    parent[s as usize] = r;
                }
            }
        }
        // Numbered in the order of their first clauses; a variable in no clause has none.
        let mut number = vec![NO_COMPONENT; self.num_vars];
        let mut of_clause = Vec::with_capacity(self.num_clauses());
        let mut count = 0;
        for clause in self.clauses() {
            let part = clause.first().map_or(NO_COMPONENT, |&lit| {
                let r = root(&mut parent, var_index(lit) as u32) as usize;
                if number[r] == NO_COMPONENT {
                    number[r] = count;
                    count += 1;
                }
                number[r]
            });
            of_clause.push(part);
        }
        let mut members = vec![Vec::new(); count as usize];
        let mut of_var = Vec::with_capacity(self.num_vars);
        for v in 0..self.num_vars {
            let part = number[root(&mut parent, v as u32) as usize];
            if part != NO_COMPONENT {
                members[part as usize].push(v as u32);
            }
            of_var.push(part);
        }
        Components {
            of_var,
            of_clause,
            members,
        }
    }
}

/// [`Components::of_clause`] of an empty clause, [`Components::of_var`] of a variable in no
/// clause.
pub const NO_COMPONENT: u32 = u32::MAX;

/// A formula's parts that share no variable ([`Cnf::components`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Components {
    of_var: Vec<u32>,
    of_clause: Vec<u32>,
    members: Vec<Vec<u32>>,
}

impl Components {
    /// How many parts there are (each holds a clause with a literal).
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there is none: no clause has a literal.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The part of clause `i` ([`NO_COMPONENT`] for an empty clause).
    pub fn of_clause(&self, i: usize) -> u32 {
        self.of_clause[i]
    }

    /// The part of variable `v` (from 0; [`NO_COMPONENT`] for a variable in no clause).
    pub fn of_var(&self, v: usize) -> u32 {
        self.of_var[v]
    }

    /// The variables (from 0) of part `part`, in order.
    pub fn members(&self, part: usize) -> &[u32] {
        &self.members[part]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_tells_formulas_apart() {
        let a = Cnf::from_clauses(3, &[vec![1, -2], vec![3]]);
        assert_eq!(a.fingerprint(), a.clone().fingerprint());
        let swapped = Cnf::from_clauses(3, &[vec![3], vec![1, -2]]);
        let regrouped = Cnf::from_clauses(3, &[vec![1], vec![-2, 3]]);
        let wider = Cnf::from_clauses(4, &[vec![1, -2], vec![3]]);
        let mut projected = a.clone();
        projected.set_independent_support(vec![1]);
        for other in [&swapped, &regrouped, &wider, &projected] {
            assert_ne!(a.fingerprint(), other.fingerprint());
        }
    }

    #[test]
    fn clauses_are_stored_in_order() {
        let cnf = Cnf::from_clauses(3, &[vec![1, -2], vec![], vec![3, 2, -1]]);
        assert_eq!(cnf.num_clauses(), 3);
        assert_eq!(cnf.clause(0), &[1, -2]);
        assert!(cnf.clause(1).is_empty());
        assert_eq!(cnf.clause(2), &[3, 2, -1]);
        assert_eq!(cnf.clauses().map(<[Lit]>::len).sum::<usize>(), 5);
    }

    #[test]
    fn projection_defaults_to_all_variables() {
        let mut cnf = Cnf::from_clauses(3, &[vec![1, 2, 3]]);
        assert_eq!(cnf.projection(), vec![0, 1, 2]);
        cnf.set_independent_support(vec![3, 1]);
        assert_eq!(cnf.projection(), vec![2, 0]);
    }

    #[test]
    fn components_are_the_parts_sharing_no_variable() {
        // x1-x2 and x2-x4 join; x3 alone; x5 is in no clause; the empty clause has no part.
        let cnf = Cnf::from_clauses(5, &[vec![3], vec![1, -2], vec![], vec![-4, 2], vec![-3]]);
        let parts = cnf.components();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts.members(0), &[2]);
        assert_eq!(parts.members(1), &[0, 1, 3]);
        let of_clauses: Vec<u32> = (0..5).map(|i| parts.of_clause(i)).collect();
        assert_eq!(of_clauses, vec![0, 1, NO_COMPONENT, 1, 0]);
        let of_vars: Vec<u32> = (0..5).map(|v| parts.of_var(v)).collect();
        assert_eq!(of_vars, vec![1, 1, 0, 1, NO_COMPONENT]);
        assert_eq!(Cnf::from_clauses(2, &[vec![1, 2]]).components().len(), 1);
    }

    #[test]
    fn occurrence_lists_name_each_clause_once_per_variable() {
        let cnf = Cnf::from_clauses(2, &[vec![1, -1, 2], vec![-2]]);
        assert_eq!(cnf.occurrence_lists(), vec![vec![0], vec![0, 1]]);
    }
}
