//! The index in PostgreSQL + pgvector, for knowledge bases that outgrow one
//! component: the schema (its one owner: `site-builder publish` writes it, the
//! edge function and `site-builder eval --postgres` read it) and the ranking over
//! it, which gives the bundled ranking.
//!
//! No I/O here either: statements go through the [`Sql`] trait, which the edge
//! function implements over Spin's `spin:postgres/postgres@4.2.0` and the CLI over
//! a native client. Every statement casts its parameters (`$1::int4`) and results
//! to plain types, so a client needs only the handful of [`Value`]s Spin's
//! interface carries (it has no float arrays and no pgvector types: vectors
//! travel as text).
//!
//! How a query runs against a tenant (one round trip each):
//!
//! 1. the tenant's statistics (generation, N, mean length) and the query terms'
//!    ids and document frequencies (and, while a word is being typed, the
//!    completion of each of its prefixes, by the same rule as the index);
//! 2. dense candidates from the tenant's HNSW index (`kb_dense`, `ef` chosen per
//!    query);
//! 3. BM25 candidates: Postgres sums BM25 over the postings to choose the top
//!    `depth` (+ a margin), and returns their postings of the query terms, from
//!    which [`bm25::rescore`] computes the scores in `f32` in the index's order
//!    of additions, so they equal the bundled scores to the bit. On a large
//!    tenant the common terms only score ([`selecting_terms`]) and a threshold
//!    over the terms' weight bounds proves the choice exact ([`BM25_BOUNDED`]),
//!    or the full choice runs after it;
//! 4. every candidate's page, sparse norm and exact cosine (f32 vector against
//!    the query), so the fusion sees what the bundled scan gives it;
//! 5. the records of the hits kept (cached per instance while the tenant's
//!    generation is unchanged).
//!
//! Then [`fusion::fuse`] and [`fusion::finish`], the same code as the bundled
//! index. Tenants are isolated by construction: every chunk row lives in its
//! tenant's partition (`kb_chunks_<id>`, with its own HNSW index), term ids are
//! the tenant's own, and every statement names the tenant.
//!
//! [`schema`] owns the tables and migrations; [`sql`] the client interface
//! ([`Sql`], [`Value`]); [`statements`] the query statements and the bounded
//! choice of BM25 candidates; [`lexical`] the query's BM25 side as the tenant's
//! vocabulary reads it; [`store`] a tenant and the ranking over it.

mod lexical;
mod schema;
mod sql;
mod statements;
mod store;

pub use schema::{partition, valid_tenant, DIM, MIGRATE_FROM_1, RECOUNT, SCHEMA, SCHEMA_VERSION};
pub use sql::{redact, vector_text, Sql, SqlError, Value};
pub use statements::{CANDIDATE_CAP, SELECTION_DF};
pub use store::{fallback_params, Choices, Store, StoreError, Tenant};

#[cfg(test)]
mod tests {
    use super::statements::{selecting_terms, weight_bound, Term};
    use super::*;
    use search_core::index::bm25;

    #[test]
    fn common_terms_do_not_choose_candidates_but_the_two_rarest_always_do() {
        // Below the cutoff every term chooses.
        assert_eq!(selecting_terms(&mut [(1, 4000), (2, 10), (3, 4439)], 4439, SELECTION_DF), vec![2, 1, 3]);
        // A million chunks: the limit is 50,000; the common terms only score.
        let mut q = [(1, 300_000), (2, 150), (3, 25_000), (4, 9_000), (5, 60_000)];
        assert_eq!(selecting_terms(&mut q, 1_000_000, SELECTION_DF), vec![2, 4, 3]);
        // Only common terms: the two rarest choose.
        let mut q = [(1, 300_000), (2, 150_000), (3, 90_000)];
        assert_eq!(selecting_terms(&mut q, 1_000_000, SELECTION_DF), vec![3, 2]);
        assert_eq!(selecting_terms(&mut [(1, 300_000)], 1_000_000, usize::MAX), vec![1]);
    }

    #[test]
    fn a_weight_bound_taken_at_one_mean_length_bounds_every_posting_at_another() {
        let (k1, b, chunks) = (1.2f32, 0.75f32, 1000);
        let postings = [(1.0f32, 3.0f32), (2.0, 40.0), (7.5, 120.0), (1.0, 400.0), (30.0, 35.0)];
        for then in [20.0f32, 80.0, 300.0] {
            let ub =
                postings.iter().map(|&(tf, len)| bm25::bm25_tf(tf, len, then, k1, b) / (k1 + 1.0)).fold(0.0, f32::max);
            let t = Term { id: 1, df: postings.len(), ub, ub_avg: then };
            for now in [5.0f32, 20.0, 79.0, 81.0, 300.0, 5000.0] {
                let bound = weight_bound(&t, chunks, now, k1, true);
                let idf = bm25::idf(t.df, chunks);
                for &(tf, len) in &postings {
                    let w = f64::from(idf * bm25::bm25_tf(tf, len, now, k1, b));
                    assert!(w <= bound, "tf {tf} len {len} at {now} (bound from {then}): {w} > {bound}");
                }
                // Never looser than the weight's own ceiling, idf (k1 + 1).
                assert!(bound <= f64::from(idf * (k1 + 1.0)) * 1.001, "{bound}");
            }
        }
        // A bound computed for other k1 and b, or never computed, is the ceiling.
        let unknown = Term { id: 1, df: 5, ub: 0.1, ub_avg: 0.0 };
        let ceiling = f64::from(bm25::idf(5, chunks) * (k1 + 1.0));
        let near = |x: f64| (x / ceiling - 1.0).abs() < 1e-3;
        assert!(near(weight_bound(&unknown, chunks, 50.0, k1, true)));
        let other = Term { ub_avg: 50.0, ..unknown };
        assert!(near(weight_bound(&other, chunks, 50.0, k1, false)));
        assert!(weight_bound(&other, chunks, 50.0, k1, true) < ceiling / 5.0);
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(redact("postgres://kb:secret@db:5432/kb"), "postgres://kb:***@db:5432/kb");
        assert_eq!(redact("postgres://kb@db/kb"), "postgres://kb@db/kb");
        assert_eq!(redact("host=db user=kb password=secret"), "host=db user=kb password=***");
    }

    #[test]
    fn tenant_names_are_checked() {
        assert!(valid_tenant("physics-2") && valid_tenant(&"x".repeat(63)));
        for bad in ["", "a b", "x;drop", "é", &"x".repeat(64)] {
            assert!(!valid_tenant(bad), "{bad}");
        }
    }

    #[test]
    fn vectors_travel_as_text_that_parses_back_to_the_same_floats() {
        let v = [0.1f32, -1.0e-7, 0.333_333_34, f32::NAN];
        let t = vector_text(&v);
        assert_eq!(t, "[0.1,-0.0000001,0.33333334,0]");
        let back: Vec<f32> = t.trim_matches(['[', ']']).split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(&back[..3], &v[..3]);
    }
}
