//! The statements a query runs, and how the BM25 candidates are chosen on a
//! large tenant: the rarer terms choose, the common ones only score, and a
//! threshold over the terms' weight bounds proves the choice exact.

use search_core::index::bm25;

/// How many BM25 candidates past `depth` Postgres's float8 ranking returns for
/// the exact `f32` rescoring to choose from, so a near tie at the boundary
/// cannot leave out a chunk the bundled index keeps.
pub(super) const BM25_MARGIN: usize = 32;

/// Prefix completions for a word being typed: the index's rule
/// ([`bm25::best_completion`]) in SQL. Per prefix, the first
/// [`bm25::COMPLETION_SCAN`] terms from the prefix on that start with it (those
/// are contiguous in byte order), identifier terms left out, the highest document
/// frequency first and the first in order among equals.
pub(super) const COMPLETIONS: &str = "SELECT p, (SELECT c.term FROM (SELECT term, df FROM kb_terms \
     WHERE tenant = $1::int4 AND term >= p AND term < p || chr(1114111) ORDER BY term LIMIT $3::int4) c \
     WHERE NOT starts_with(c.term, '=') ORDER BY c.df DESC, c.term LIMIT 1) \
     FROM unnest($2::text[]) AS p";

/// The tenant's statistics, and each known query term's id, df and the two
/// weight-bound columns named (`kb_terms.ub, ub_avg` from schema version 2 on).
macro_rules! terms {
    ($bounds:literal) => {
        concat!(
            "SELECT k.generation, k.chunks, k.avg_len, t.term, t.id, t.df, ",
            $bounds,
            " FROM kb_tenants k LEFT JOIN kb_terms t ON t.tenant = k.id AND t.term = ANY($2::text[]) WHERE k.id = $1::int4"
        )
    };
}

/// The tenant's statistics, and each known query term's id, df and weight bound.
pub(super) const TERMS: &str = terms!("t.ub, t.ub_avg");

/// [`TERMS`] on a database of schema version 1, which has no bounds: each
/// reads as unknown, so a function of this version can be deployed before
/// `site-builder publish` migrates the database.
pub(super) const TERMS_V1: &str = terms!("1::float4, 0::float4");

/// One term's BM25 weight in a chunk, in SQL (`p` a posting; `$5` k1, `$6` b,
/// `$7` the mean length), as [`BM25`] sums it.
macro_rules! weight {
    () => {
        "p.tf * ($5::float8 + 1) / (p.tf + $5::float8 * (1 - $6::float8 + $6::float8 * p.len / $7::float8))"
    };
}

/// The postings of the query terms `$4` of each chunk of `from` (a CTE with a
/// `doc` column), looked up chunk by chunk. The lateral subquery's `OFFSET 0`
/// keeps the planner from flattening it: it cannot see how few chunks `from`
/// holds (its estimate is the `LIMIT`) nor how many postings a term has (an
/// array's terms are unknown to it), and at a million chunks it chose to hash
/// every posting of every query term, 300,000 rows, for 132 chunks.
macro_rules! chunk_postings {
    ($from:literal) => {
        concat!(
            "SELECT p.doc, p.term, p.tf, p.len FROM ",
            $from,
            " CROSS JOIN LATERAL (SELECT p.doc, p.term, p.tf, p.len FROM kb_postings p \
             WHERE p.doc = ",
            $from,
            ".doc AND p.term = ANY($4::int4[]) OFFSET 0) p"
        )
    };
}

/// BM25 candidates: the top `$8` chunks by BM25 summed in float8 (for choosing
/// them), then their postings of the query terms (for scoring them exactly).
/// Every number is float8 on purpose: an integer meeting a literal like 0.5
/// becomes `numeric`, which cost 5 of 12 ms on a six-term CSC query.
pub(super) const BM25: &str = concat!(
    "WITH q AS MATERIALIZED (SELECT id, ln(1 + ($2::float8 - df::float8 + 0.5) / (df::float8 + 0.5)) AS w \
         FROM kb_terms WHERE tenant = $1::int4 AND id = ANY($3::int4[])), \
     top AS MATERIALIZED (SELECT p.doc FROM q JOIN kb_postings p ON p.term = q.id GROUP BY p.doc \
         ORDER BY sum(q.w * ",
    weight!(),
    ") DESC, p.doc LIMIT $8::int4) ",
    chunk_postings!("top")
);

/// What the terms left out of the choice (`q.sel` false) add to the chunk
/// `from.doc` of a CTE `from`, in float8: each looked up by (term, chunk) in the postings' key, the way the
/// threshold's few hundred or few thousand chunks are cheapest to score.
macro_rules! left_out_sum {
    ($from:literal) => {
        concat!(
            "coalesce((SELECT sum(q.w * ",
            weight!(),
            ") FROM q JOIN kb_postings p ON p.term = q.id WHERE NOT q.sel AND p.doc = ",
            $from,
            ".doc), 0)"
        )
    };
}

/// BM25 candidates when some query terms (the common ones) do not choose: a
/// threshold algorithm in one statement, after MaxScore. `agg` sums the
/// choosing terms `$3` per chunk (`s`); the best `$8` of it are scored in full
/// (`s` plus what the left-out terms add), and the `$9`-th of those full scores
/// is θ, a lower bound on the exact `$9`-th score. A chunk whose `s` is below
/// θ − `$10` (`$10` bounds what the left-out terms can add) cannot reach θ, so
/// the candidates are the chunks of `agg` at or above that line (`keep`, at
/// most `$11` of them). They are scored in full the same way, and only the
/// best `$12` come back, with their postings of every query term `$4` for the
/// exact rescoring and, on every row, how many chunks `keep` held: a proven
/// choice needs no more than the bundled ranking reads, so the rows, the side
/// data and the rescoring stay `depth`-sized however many chunks the threshold
/// let through. When `keep` reaches the cap, the same statement makes the
/// exact choice instead (`whole`: `agg`'s sums plus every posting of the
/// left-out terms, so the choosing terms are not summed twice; the branch not
/// taken is never executed, its filter being a one-time one). Whether the
/// choice is proven exact otherwise is decided by the caller
/// ([`Store::candidates`]).
pub(super) const BM25_BOUNDED: &str = concat!(
    "WITH q AS MATERIALIZED (SELECT id, id = ANY($3::int4[]) AS sel, \
         ln(1 + ($2::float8 - df::float8 + 0.5) / (df::float8 + 0.5)) AS w \
         FROM kb_terms WHERE tenant = $1::int4 AND id = ANY($4::int4[])), \
     agg AS MATERIALIZED (SELECT p.doc, sum(q.w * ",
    weight!(),
    ") AS s FROM q JOIN kb_postings p ON p.term = q.id WHERE q.sel GROUP BY p.doc), \
     top AS MATERIALIZED (SELECT doc, s FROM agg ORDER BY s DESC, doc LIMIT $8::int4), \
     theta AS MATERIALIZED (SELECT coalesce((SELECT f FROM (SELECT top.s + ",
    left_out_sum!("top"),
    " AS f FROM top) t ORDER BY f DESC OFFSET $9::int4 - 1 LIMIT 1), 0) AS v), \
     keep AS MATERIALIZED (SELECT doc, s FROM agg WHERE s >= (SELECT v FROM theta) - $10::float8 \
         ORDER BY s DESC, doc LIMIT $11::int4), \
     scored AS (SELECT keep.doc, keep.s + ",
    left_out_sum!("keep"),
    " AS f FROM keep), \
     n AS MATERIALIZED (SELECT count(*)::int4 AS kept FROM keep), \
     whole AS (SELECT d.doc, sum(d.x) AS f FROM (SELECT doc, s AS x FROM agg UNION ALL \
         SELECT p.doc, q.w * ",
    weight!(),
    " FROM q JOIN kb_postings p ON p.term = q.id WHERE NOT q.sel) d GROUP BY d.doc), \
     best AS MATERIALIZED ( \
         (SELECT doc FROM scored WHERE (SELECT kept FROM n) < $11::int4 ORDER BY f DESC, doc LIMIT $12::int4) \
         UNION ALL \
         (SELECT doc FROM whole WHERE (SELECT kept FROM n) >= $11::int4 ORDER BY f DESC, doc LIMIT $12::int4)) \
     SELECT c.doc, c.term, c.tf, c.len, n.kept FROM n CROSS JOIN (",
    chunk_postings!("best"),
    ") c"
);

/// At most this many candidates does [`BM25_BOUNDED`] return by default
/// ([`Store::with_candidate_cap`]); a query whose threshold lets more through is
/// answered by the exact choice instead, made in the same statement.
pub const CANDIDATE_CAP: usize = 8192;

/// A known query term as [`TERMS`] reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Term {
    pub(super) id: i32,
    pub(super) df: usize,
    /// `kb_terms.ub` and `ub_avg`.
    pub(super) ub: f32,
    pub(super) ub_avg: f32,
}

/// The most term `t` can add to a chunk's BM25 score at mean length `avg_len`,
/// with a little slack for float rounding. For one posting, the weight
/// tf / (tf + k1 (1 - b) + k1 b len / A) grows with A at most in proportion
/// (for A' > A the denominator shrinks by less than A / A'), so a bound taken at
/// an older mean length stays a bound scaled by `max(1, A' / A)`; and the
/// weight never exceeds 1. `stored`: whether `ub` was computed for these k1, b.
pub(super) fn weight_bound(t: &Term, chunks: usize, avg_len: f32, k1: f32, stored: bool) -> f64 {
    let idf = f64::from(bm25::idf(t.df, chunks));
    let w = if stored && t.ub_avg > 0.0 {
        (f64::from(t.ub) * (f64::from(avg_len) / f64::from(t.ub_avg)).max(1.0)).min(1.0)
    } else {
        1.0
    };
    idf * (f64::from(k1) + 1.0) * w * (1.0 + 1e-4) + 1e-6
}

/// Which query terms choose the BM25 candidates (`$3` of [`BM25`]; all of them
/// score the chosen ones): every term in at most `max(cutoff, N / 20)` chunks,
/// and always the two rarest. Summing a term that is in a fifth of a million
/// chunks costs hundreds of thousands of rows for a contribution its low idf
/// keeps small; left out of the choice, it still counts in every candidate's
/// exact score. A knowledge base of at most [`SELECTION_DF`] chunks (CSC has
/// 4,439) always gets the exact choice.
pub(super) fn selecting_terms(known: &mut [(i32, usize)], chunks: usize, cutoff: usize) -> Vec<i32> {
    let limit = cutoff.max(chunks / 20);
    known.sort_by_key(|&(id, df)| (df, id));
    known.iter().enumerate().filter(|(i, (_, df))| *i < 2 || *df <= limit).map(|(_, (id, _))| *id).collect()
}

/// The document frequency up to which a term always chooses BM25 candidates
/// ([`selecting_terms`]); past it, up to 5 % of the chunks. The terms left out
/// only score, and [`BM25_BOUNDED`]'s threshold proves the choice exact or the
/// full choice runs (docs/benchmarks/postgres.md, "The BM25 choice made exact at a million
/// chunks": 200 of 200 rankings identical 100 deep).
pub const SELECTION_DF: usize = 5_000;
