//! What the guard refuses, literal and resolved, and what it lets through.

use crate::{EgressErrorKind, METADATA_REASON};

use super::{Net, Sink};

#[tokio::test]
async fn literal_addresses_are_refused_before_anything_is_sent() {
    let net = Net::new("", &[]).await;
    let trip = net.tripwire.port();
    let cases = [
        (format!("http://127.0.0.1:{trip}/ok"), "loopback"),
        (format!("http://0x7f.1:{trip}/ok"), "loopback"),
        (format!("http://2130706433:{trip}/ok"), "loopback"),
        (format!("http://0177.0.0.1:{trip}/ok"), "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{trip}/ok"), "loopback"),
        ("http://[::1]/".into(), "loopback"),
        ("http://[::]/".into(), "unspecified"),
        ("http://0.0.0.0/".into(), "unspecified"),
        ("http://10.0.0.1/".into(), "private (RFC 1918)"),
        ("http://172.16.5.4/".into(), "private (RFC 1918)"),
        ("https://192.168.1.1/".into(), "private (RFC 1918)"),
        ("http://100.64.0.1/".into(), "CGNAT (RFC 6598)"),
        ("http://169.254.1.1/".into(), "link-local"),
        ("http://[fe80::1]/".into(), "link-local"),
        ("http://[fd12::1]/".into(), "unique-local"),
        ("http://224.0.0.251/".into(), "multicast"),
        ("http://192.0.2.10/".into(), "documentation"),
        ("http://240.0.0.1/".into(), "reserved"),
        ("http://169.254.169.254/latest/meta-data/".into(), METADATA_REASON),
        ("http://[fd00:ec2::254]/latest/meta-data/".into(), METADATA_REASON),
        ("http://[::ffff:169.254.169.254]/".into(), METADATA_REASON),
        ("http://[64:ff9b::a9fe:a9fe]/".into(), METADATA_REASON),
    ];
    for (url, reason) in cases {
        net.refused(&url, reason).await;
    }
}

#[tokio::test]
async fn names_are_judged_by_every_address_they_resolve_to() {
    let net = Net::new(
        "",
        &[
            ("internal.example", &["10.0.0.1"]),
            ("metadata.example", &["169.254.169.254"]),
            ("metadata6.example", &["fd00:ec2::254"]),
            ("localhost", &["127.0.0.1", "::1"]),
            ("mapped.example", &["::ffff:127.0.0.1"]),
            ("link.example", &["fe80::1"]),
            ("mixed.example", &["93.184.216.34", "10.0.0.1"]),
        ],
    )
    .await;
    let error = net.refused("http://internal.example/", "private (RFC 1918)").await;
    assert_eq!(
        error.to_string(),
        "Refused to reach internal.example: its address 10.0.0.1 is in a blocked range: private (RFC 1918). \
         An operator can open named hosts and ranges with LENSERFIGHT_EGRESS_ALLOW."
    );
    net.refused("http://metadata.example/latest/", METADATA_REASON).await;
    net.refused("http://metadata6.example/", METADATA_REASON).await;
    net.refused(&format!("http://localhost:{}/ok", net.tripwire.port()), "loopback").await;
    net.refused("http://mapped.example/", "loopback").await;
    net.refused("http://link.example/", "link-local").await;
    net.refused("http://mixed.example/", "10.0.0.1").await;
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_refused() {
    let net = Net::new("", &[("empty.example", &[])]).await;
    let error = net.get("http://nowhere.example/").await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Dns, "{error}");
    assert!(error.to_string().contains("nowhere.example"), "{error}");
    let error = net.get("http://empty.example/").await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Dns, "{error}");
    assert!(error.to_string().contains("no addresses"), "{error}");
    assert_eq!(net.tripwire.hits(), 0);
}

/// The other side of every refusal test: an address the guard lets
/// through does reach the tripwire, so its count of 0 means something.
#[tokio::test]
async fn the_tripwire_catches_what_passes() {
    let net = Net::new("", &[("public.example", &["93.184.216.34"])]).await;
    let answer = net.get("http://public.example/ok").await.unwrap();
    assert_eq!((answer.status.as_u16(), answer.body.as_slice()), (200, &b"hello"[..]));
    assert_eq!(net.tripwire.hits(), 1);
    let answer = net.get("http://93.184.216.34/ok").await.unwrap();
    assert_eq!(answer.status.as_u16(), 200);
    assert_eq!(net.tripwire.hits(), 2);
}

#[tokio::test]
async fn the_allow_list_opens_loopback_fakes() {
    let sink = Sink::start().await;
    let closed = Net::new("", &[("sink.test", &["127.0.0.1"])]).await;
    let error = closed.get(sink.url("/ok").as_str()).await.unwrap_err();
    assert!(
        error.to_string().contains("loopback") && error.to_string().contains("LENSERFIGHT_EGRESS_ALLOW"),
        "{error}"
    );
    let by_name = format!("http://sink.test:{}/ok", sink.port());
    assert!(closed.get(&by_name).await.unwrap_err().to_string().contains("loopback"));
    assert_eq!(sink.hits(), 0);

    let by_address = Net::new("127.0.0.1", &[]).await;
    assert_eq!(by_address.get(sink.url("/ok").as_str()).await.unwrap().body, b"hello");
    let by_host = Net::new("sink.test", &[("sink.test", &["127.0.0.1"])]).await;
    assert_eq!(by_host.get(&by_name).await.unwrap().body, b"hello");
    let by_range = Net::new("127.0.0.0/8", &[]).await;
    assert_eq!(by_range.get(sink.url("/ok").as_str()).await.unwrap().body, b"hello");
    assert_eq!(sink.hits(), 3);
}

#[tokio::test]
async fn metadata_stays_closed_whatever_the_list_says() {
    let net = Net::new(
        "169.254.0.0/16, fd00::/8, metadata.example, *.cloud.example",
        &[("metadata.example", &["169.254.169.254"]), ("imds.cloud.example", &["fd00:ec2::254"])],
    )
    .await;
    let error = net.refused("http://169.254.169.254/latest/meta-data/", METADATA_REASON).await;
    assert!(error.to_string().contains("whatever LENSERFIGHT_EGRESS_ALLOW says"), "{error}");
    net.refused("http://[fd00:ec2::254]/", METADATA_REASON).await;
    net.refused("http://metadata.example/", METADATA_REASON).await;
    net.refused("http://imds.cloud.example/", METADATA_REASON).await;
}

#[tokio::test]
async fn only_http_urls_without_credentials_are_sent() {
    let sink = Sink::start().await;
    let net = Net::new("127.0.0.1", &[]).await;
    for (url, says) in [
        ("ftp://127.0.0.1/".to_owned(), "only http and https"),
        ("file:///etc/passwd".to_owned(), "only http and https"),
        (format!("http://user:secret@127.0.0.1:{}/ok", sink.port()), "user name or password"),
    ] {
        let error = net.get(&url).await.unwrap_err();
        assert_eq!(error.kind(), EgressErrorKind::Invalid, "{url}: {error}");
        assert!(error.to_string().contains(says), "{url}: {error}");
    }
    assert_eq!(sink.hits() + net.tripwire.hits(), 0);
}

#[tokio::test]
async fn a_redirect_to_metadata_is_refused_after_the_first_hop() {
    let sink = Sink::start().await;
    let net = Net::new("127.0.0.1", &[]).await;
    let url = sink.url("/redirect?to=http://169.254.169.254/latest/meta-data/iam/");
    net.refused(url.as_str(), METADATA_REASON).await;
    assert_eq!(sink.hits(), 1, "only the first hop reached the sink");
}

#[tokio::test]
async fn a_redirect_to_a_name_of_the_private_network_is_refused() {
    let sink = Sink::start().await;
    let net = Net::new("127.0.0.1", &[("internal.example", &["10.0.0.1"])]).await;
    let url = sink.url("/redirect?status=307&to=http://internal.example/admin");
    net.refused(url.as_str(), "private (RFC 1918)").await;
    let url = sink.url("/redirect?status=308&to=http://[::]/");
    net.refused(url.as_str(), "unspecified").await;
    let url = sink.url("/redirect?to=ftp://127.0.0.1/");
    let error = net.get(url.as_str()).await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Invalid, "{error}");
    assert_eq!(sink.hits(), 3);
}
