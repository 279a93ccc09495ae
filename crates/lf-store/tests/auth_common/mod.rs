//! OAuth races on real tasks (tokio::spawn, several worker threads), beyond
//! lf-auth's contract suite, which joins its concurrent calls on one task.

#![allow(dead_code)] // Each test target uses some of these.

use std::sync::Arc;

use lf_auth::contract::Flow;
use lf_auth::{AuthConfig, AuthService, AuthStore, NewToken, OAuthErrorKind};
use lf_core::{Scopes, SystemClock};

const RESOURCE: &str = "https://mcp.example.com/mcp";

/// Redeems of one code from many tasks at once, several rounds: exactly one
/// wins each round, every other gets invalid_grant.
pub async fn racing_redeems(store: Arc<dyn AuthStore>) {
    let flow = Arc::new(Flow::new(store).await);
    for _ in 0..5 {
        let code = flow.code().await;
        let tasks: Vec<_> = (0..12)
            .map(|_| {
                let (flow, code) = (flow.clone(), code.clone());
                tokio::spawn(async move { flow.redeem(&code).await })
            })
            .collect();
        let mut wins = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => wins += 1,
                Err(e) => assert_eq!(e.kind, OAuthErrorKind::InvalidGrant, "{e:?}"),
            }
        }
        assert_eq!(wins, 1, "exactly one of concurrent redeems wins");
    }
}

/// The same code redeemed through two stores over one database (two
/// server processes): exactly one wins.
pub async fn racing_redeems_on_two(a: Arc<dyn AuthStore>, b: Arc<dyn AuthStore>) {
    let flow = Arc::new(Flow::new(a).await);
    // The same rules over the other handle, same client and lenser.
    let other = Arc::new(AuthService::new(
        b,
        Arc::new(SystemClock),
        AuthConfig { resources: vec![RESOURCE.into()], ..AuthConfig::default() },
    ));
    for _ in 0..5 {
        let code = flow.code().await;
        let client = flow.client.id.to_string();
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let (flow, other, code, client) = (flow.clone(), other.clone(), code.clone(), client.clone());
                tokio::spawn(async move {
                    if i % 2 == 0 {
                        flow.redeem(&code).await.is_ok()
                    } else {
                        other
                            .redeem_code(
                                &client,
                                &code,
                                "http://127.0.0.1:41234/callback",
                                "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                                None,
                            )
                            .await
                            .is_ok()
                    }
                })
            })
            .collect();
        let mut wins = 0;
        for task in tasks {
            wins += usize::from(task.await.unwrap());
        }
        assert_eq!(wins, 1, "exactly one of concurrent redeems across two handles wins");
    }
}

/// One refresh token presented by many tasks at once: at most one rotation
/// wins, and since the others replay a used token, the whole family ends
/// revoked.
pub async fn racing_refreshes(store: Arc<dyn AuthStore>) {
    let flow = Arc::new(Flow::new(store).await);
    let grant = flow.redeem(&flow.code().await).await.unwrap();
    let client = flow.client.id.to_string();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (flow, client, token) = (flow.clone(), client.clone(), grant.refresh_token.clone());
            tokio::spawn(async move { flow.auth.refresh(&client, &token, None, None).await })
        })
        .collect();
    let mut new_tokens = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(g) => new_tokens.push(g),
            Err(e) => assert_eq!(e.kind, OAuthErrorKind::InvalidGrant, "{e:?}"),
        }
    }
    assert_eq!(new_tokens.len(), 1, "exactly one rotation wins");
    let after = flow.auth.authenticate(&new_tokens[0].access_token, RESOURCE).await.unwrap();
    assert_eq!(after, Err(lf_auth::AuthFailure::Revoked), "the replays revoked the family");
}

/// An account, an admin token, a client, a code, and the tokens a code
/// turns into; answers every secret handed out, for a check that none of
/// them is stored.
pub async fn issue_everything(store: Arc<dyn AuthStore>) -> Vec<String> {
    let flow = Flow::new(store.clone()).await;
    let auth = AuthService::new(store, Arc::new(SystemClock), AuthConfig::default());
    let password = "correct horse battery staple";
    let handle = format!("h_{}", &lf_auth::TokenId::new().as_uuid().simple().to_string()[16..]);
    let me = auth.create_lenser(&handle, password).await.unwrap();
    let admin = auth
        .issue_token(NewToken {
            lenser: me.id,
            scopes: Scopes::READ_WRITE,
            resource: Some(RESOURCE.into()),
            ttl: None,
            label: Some("laptop".into()),
        })
        .await
        .unwrap();
    let pending = flow.code().await;
    let grant = flow.redeem(&flow.code().await).await.unwrap();
    vec![password.to_owned(), admin.secret, pending, grant.access_token, grant.refresh_token]
}
