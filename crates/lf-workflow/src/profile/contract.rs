//! The public contract suite every [`ModelProfileStore`] runs: the
//! in-memory store here, SQLite and PostgreSQL in lf-store. Each check uses
//! fresh owners, so the suite runs against a store that holds data.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, LfResult, ModelProfileId, PageRequest, Reach, Timestamp};

use super::model::{Endpoint, ModelProfile, Parameters, Prices, ProfileName, ProfileVisibility};
use super::store::ModelProfileStore;
use crate::model::ConnectionRef;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn ModelProfileStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    visibility(s).await;
    names_are_unique_among_live_profiles(s).await;
    saves_expect_what_they_read(s).await;
}

fn profile(owner: LenserId, name: &str, visibility: ProfileVisibility) -> ModelProfile {
    // Microseconds, as every store keeps them.
    let at = Timestamp::from_micros(1_760_000_000_123_456);
    ModelProfile {
        id: ModelProfileId::new(),
        owner,
        name: ProfileName::parse(name).unwrap(),
        endpoint: Endpoint::Operator("default".into()),
        model: "llama3.2".into(),
        parameters: Parameters::default(),
        prices: Prices::default(),
        visibility,
        created_at: at,
        updated_at: at,
        archived_at: None,
    }
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

async fn round_trip(s: &dyn ModelProfileStore) {
    let owner = LenserId::new();
    let mut p = profile(owner, "cheap", ProfileVisibility::Private);
    p.endpoint = Endpoint::Connection(ConnectionRef::parse("endpoint", "openai").unwrap());
    p.model = "gpt-4o-mini".into();
    p.parameters = Parameters {
        temperature: Some(0.25),
        top_p: Some(0.9),
        max_tokens: Some(300),
        seed: Some(-7),
        stop: vec!["\n\n".into(), "END".into()],
    };
    p.prices = Prices::new(0.15, 0.6).unwrap();
    s.add_profile(&p).await.unwrap();
    assert_eq!(s.profile(Reach::Lenser(owner), p.id).await.unwrap(), Some(p.clone()), "read back as written");
    assert_eq!(s.profile(Reach::Everything, p.id).await.unwrap(), Some(p.clone()));
    assert_eq!(s.profile_named(owner, &p.name).await.unwrap(), Some(p.clone()));
    assert_eq!(s.profile(Reach::Lenser(owner), ModelProfileId::new()).await.unwrap(), None);
    let page = s.list_profiles(Reach::Lenser(owner), PageRequest::default()).await.unwrap();
    assert!(page.items.contains(&p));
}

async fn visibility(s: &dyn ModelProfileStore) {
    let (me, other) = (LenserId::new(), LenserId::new());
    let private = profile(other, "secret", ProfileVisibility::Private);
    let public = profile(other, "shared", ProfileVisibility::Public);
    s.add_profile(&private).await.unwrap();
    s.add_profile(&public).await.unwrap();
    assert_eq!(s.profile(Reach::Lenser(me), private.id).await.unwrap(), None, "another's private profile");
    assert_eq!(s.profile(Reach::Lenser(me), public.id).await.unwrap(), Some(public.clone()));
    assert_eq!(s.profile_named(me, &private.name).await.unwrap(), None, "names are the owner's");
    let listed =
        s.list_profiles(Reach::Lenser(me), PageRequest::new(Some(100), None).unwrap()).await.unwrap();
    assert!(listed.items.iter().any(|p| p.id == public.id));
    assert!(!listed.items.iter().any(|p| p.id == private.id));

    // Archived: gone from listings and names, readable by id to its owner only.
    let mut archived = public.clone();
    archived.archived_at = Some(Timestamp::from_micros(1_760_000_001_000_000));
    archived.updated_at = Timestamp::from_micros(1_760_000_001_000_000);
    s.save_profile(&archived, public.updated_at).await.unwrap();
    assert_eq!(s.profile(Reach::Lenser(me), public.id).await.unwrap(), None);
    assert_eq!(s.profile(Reach::Lenser(other), public.id).await.unwrap(), Some(archived.clone()));
    assert_eq!(s.profile_named(other, &public.name).await.unwrap(), None);
    let mine =
        s.list_profiles(Reach::Lenser(other), PageRequest::new(Some(100), None).unwrap()).await.unwrap();
    assert_eq!(mine.items.iter().map(|p| p.id).collect::<Vec<_>>(), [private.id]);
    assert_eq!(mine.total, 1);
}

async fn names_are_unique_among_live_profiles(s: &dyn ModelProfileStore) {
    let owner = LenserId::new();
    let a = profile(owner, "judge", ProfileVisibility::Private);
    s.add_profile(&a).await.unwrap();
    assert_eq!(
        code(s.add_profile(&profile(owner, "judge", ProfileVisibility::Public)).await),
        ErrorCode::Conflict
    );
    s.add_profile(&profile(LenserId::new(), "judge", ProfileVisibility::Private)).await.unwrap();
    let b = profile(owner, "other", ProfileVisibility::Private);
    s.add_profile(&b).await.unwrap();
    let mut renamed = b.clone();
    renamed.name = a.name.clone();
    assert_eq!(code(s.save_profile(&renamed, b.updated_at).await), ErrorCode::Conflict);
    assert_eq!(s.profile_named(owner, &b.name).await.unwrap(), Some(b.clone()), "nothing written");
    let mut gone = a.clone();
    gone.archived_at = Some(a.updated_at);
    s.save_profile(&gone, a.updated_at).await.unwrap();
    s.add_profile(&profile(owner, "judge", ProfileVisibility::Private)).await.unwrap();
}

async fn saves_expect_what_they_read(s: &dyn ModelProfileStore) {
    let owner = LenserId::new();
    let a = profile(owner, "moving", ProfileVisibility::Private);
    s.add_profile(&a).await.unwrap();
    let mut b = a.clone();
    b.model = "qwen2.5".into();
    b.updated_at = Timestamp::from_micros(a.updated_at.as_micros() + 1);
    s.save_profile(&b, a.updated_at).await.unwrap();
    assert_eq!(code(s.save_profile(&b, a.updated_at).await), ErrorCode::Conflict, "stale");
    let mut stranger = b.clone();
    stranger.owner = LenserId::new();
    assert_eq!(code(s.save_profile(&stranger, b.updated_at).await), ErrorCode::NotFound);
    assert_eq!(s.profile(Reach::Everything, a.id).await.unwrap(), Some(b));
}
