//! Measures a lens store on a generated catalog: a point read as get_lens
//! and run_lens make it (the lens and its head version with parameters),
//! and search latency for selective and broad queries, as the service (stdio)
//! and as a signed-in lenser (HTTP) would search.
//!
//! ```text
//! cargo run --release -p lf-store --example store_perf -- [LENSES] [DATABASE_URL]
//! ```
//!
//! LENSES defaults to 100000. DATABASE_URL defaults to a new SQLite file
//! under /dev/shm (or the temp directory), deleted afterwards; a database
//! that already holds lenses is topped up to LENSES. Set LF_PERF_WORDS to a
//! word list (e.g. /usr/share/dict/american-english) for text that looks
//! like a real catalog's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lf_core::{LenserId, PageRequest, Reach, Timestamp};
use lf_lens::{
    Lens, LensDraft, LensStore, LensVersion, SearchQuery, TemplateBody, Title, VersionSelector, Visibility,
    build_params,
};

/// A small deterministic generator, so runs compare.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Roughly Zipf: low indexes are far more frequent.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((n as f64).powf(u) as usize).saturating_sub(1).min(n - 1)
    }
}

/// Words to write lenses with, most frequent first: a word list (one word a
/// line) named by LF_PERF_WORDS, e.g. /usr/share/dict/american-english, or
/// made-up words. Short words come first, as in real text.
fn vocabulary() -> Vec<String> {
    let mut words: Vec<String> =
        ["the", "a", "of", "to", "and", "in", "is", "for", "you", "your", "with", "this"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let mut rest: Vec<String> = match std::env::var("LF_PERF_WORDS") {
        Ok(path) => std::fs::read_to_string(path)
            .expect("LF_PERF_WORDS names a readable word list")
            .lines()
            .filter(|w| !w.is_empty() && w.chars().all(char::is_alphabetic))
            .map(str::to_lowercase)
            .collect(),
        Err(_) => {
            let syllables =
                ["ka", "lo", "mi", "ren", "tu", "sha", "vo", "pel", "dri", "an", "qu", "ex", "zor", "bi"];
            let mut made = Vec::new();
            for a in syllables {
                for b in syllables {
                    made.push(format!("{a}{b}"));
                    for c in syllables {
                        made.push(format!("{a}{b}{c}"));
                    }
                }
            }
            made
        }
    };
    rest.sort();
    rest.dedup();
    let mut rng = Rng(7);
    let mut keyed: Vec<(usize, u64, String)> = rest.into_iter().map(|w| (w.len(), rng.next(), w)).collect();
    keyed.sort();
    words.extend(keyed.into_iter().map(|(_, _, w)| w).filter(|w| w.len() > 1));
    words
}

fn sentence(rng: &mut Rng, vocab: &[String], words: usize) -> String {
    (0..words).map(|_| vocab[rng.zipf(vocab.len())].as_str()).collect::<Vec<_>>().join(" ")
}

fn lens(rng: &mut Rng, vocab: &[String], i: usize) -> (Lens, LensVersion) {
    let now = Timestamp::from_micros(1_700_000_000_000_000 + i as i64 * 1_000);
    let (body_words, title_words, description_words) =
        (40 + rng.below(120), 3 + rng.below(4), 10 + rng.below(10));
    let body = format!(
        "You are an expert. {} Use [[Topic]] and [[Tone:select!]] for [[Audience]]. {}",
        sentence(rng, vocab, body_words),
        sentence(rng, vocab, 20)
    );
    let body = TemplateBody::parse(body).unwrap();
    let params = build_params(&body, &[], &[]).unwrap();
    let title = Title::parse(sentence(rng, vocab, title_words)).unwrap();
    LensDraft {
        description: Some(lf_lens::Description::parse(sentence(rng, vocab, description_words)).unwrap()),
        visibility: [Visibility::Public, Visibility::Community, Visibility::Private][rng.below(3)],
        ..LensDraft::new(LenserId::new(), title, body, params)
    }
    .build(now)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let total: Duration = samples.iter().sum();
    println!(
        "{name:<40} n={:<6} p50={:>9.1?} p99={:>9.1?} max={:>9.1?} ({:.0}/s one at a time)",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples.last().unwrap(),
        samples.len() as f64 / total.as_secs_f64()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |s| s.parse().expect("LENSES is a number"));
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
    let temporary = base.join(format!("lf-perf-{}.db", std::process::id()));
    let url = args.next().unwrap_or_else(|| format!("sqlite://{}", temporary.display()));
    let db = lf_store::Database::connect(&url).await.unwrap();
    let store: Arc<dyn LensStore> = db.lens_store();

    let vocab = vocabulary();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut ids = Vec::new();
    let existing =
        store.list_lenses(Reach::Everything, &Default::default(), PageRequest::first(1)).await.unwrap().total
            as usize;
    let started = Instant::now();
    for i in existing..n {
        let (lens, version) = lens(&mut rng, &vocab, i);
        store.create_lens(&lens, &version).await.unwrap();
        ids.push(lens.id);
    }
    if n > existing {
        println!("created {} lenses in {:.1?}", n - existing, started.elapsed());
    }
    if ids.is_empty() {
        let page =
            store.list_lenses(Reach::Everything, &Default::default(), PageRequest::first(100)).await.unwrap();
        ids = page.items.iter().map(|l| l.id).collect();
    }

    // Each lens read twice: on SQLite, the second read of each is answered
    // from what the first kept (nothing is written in between).
    let reads = ids.len().min(20_000);
    for pass in ["first read", "read again"] {
        let mut samples = Vec::new();
        for i in 0..reads {
            let id = ids[(i * 7919) % ids.len()];
            let t = Instant::now();
            let (lens, version) =
                store.get_lens_and_version(Reach::Everything, id, VersionSelector::Head).await.unwrap();
            samples.push(t.elapsed());
            assert_eq!(lens.head_version_id, version.id);
        }
        report(&format!("get_lens_and_version (head, {pass})"), samples);
    }

    let me = LenserId::new();
    // A word from the long tail, and one from the middle with a common one.
    let rare = vocab[vocab.len() * 9 / 10].clone();
    let two = format!("{} {}", vocab[200], vocab[20]);
    for (name, q) in [
        ("search selective (rare word)", rare.as_str()),
        ("search selective (two words)", two.as_str()),
        ("search broad (the)", "the"),
        ("search broad (write a review)", "write a review"),
        ("search broad prefix (c)", "c"),
        ("search broad prefix (con)", "con"),
        ("search broad two words (the you)", "the you"),
    ] {
        let query = SearchQuery::parse(q).unwrap();
        for reach in [Reach::Everything, Reach::Lenser(me)] {
            let mut samples = Vec::new();
            let mut total = 0;
            for _ in 0..200 {
                let t = Instant::now();
                let page = store.search_lenses(reach, &query, None, PageRequest::default()).await.unwrap();
                samples.push(t.elapsed());
                total = page.total;
            }
            let who = if reach == Reach::Everything { "service" } else { "lenser" };
            report(&format!("{name} [{who}, {total} hits]"), samples);
        }
    }

    db.close().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", temporary.display()));
    }
}
