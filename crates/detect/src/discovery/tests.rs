use super::synth::{SynthConfig, generate};
use super::*;

/// Clusters generated events; answers (ARI, purity, clusters, agents).
fn evaluate(cfg: &SynthConfig) -> (f64, f64, Clustering) {
    let events = generate(cfg);
    let mut agg = Aggregator::new();
    let sigs: Vec<usize> = events.iter().enumerate().map(|(i, e)| agg.add(&e.observation(), e.at, i as u128)).collect();
    let clustering = cluster(&agg, &Params::default(), &[]);
    let noise = u32::MAX;
    let truth: Vec<u32> = events.iter().map(|e| e.truth.unwrap_or(noise)).collect();
    let predicted: Vec<u32> = sigs.iter().map(|s| clustering.assignment[*s].map_or(noise, |c| c as u32)).collect();
    (metrics::adjusted_rand_index(&truth, &predicted), metrics::purity(&truth, &predicted, noise), clustering)
}

#[test]
fn recovers_hidden_agents_from_noisy_events() {
    let cfg = SynthConfig { agents: 40, events: 20_000, ..SynthConfig::default() };
    let (ari, purity, clustering) = evaluate(&cfg);
    eprintln!("ari {ari:.4} purity {purity:.4} clusters {}", clustering.clusters.len());
    assert!(ari >= 0.9, "ARI {ari}");
    assert!(purity >= 0.95, "purity {purity}");
}

#[test]
fn the_same_events_give_the_same_clusters_in_any_order() {
    let cfg = SynthConfig { agents: 12, events: 3_000, ..SynthConfig::default() };
    let events = generate(&cfg);
    let run = |order: &mut dyn Iterator<Item = usize>| {
        let mut agg = Aggregator::new();
        for i in order {
            let e = &events[i];
            agg.add(&e.observation(), e.at, i as u128);
        }
        let mut profiles: Vec<(u64, Vec<(String, f64)>)> = cluster(&agg, &Params::default(), &[])
            .clusters
            .into_iter()
            .map(|c| (c.events, c.profile.get(Field::Host).to_vec()))
            .collect();
        profiles.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        profiles
    };
    assert_eq!(run(&mut (0..events.len())), run(&mut (0..events.len()).rev()));
}

#[test]
fn excluded_profiles_take_their_events_out() {
    let cfg = SynthConfig { agents: 10, events: 3_000, background_share: 0.0, ..SynthConfig::default() };
    let events = generate(&cfg);
    let mut agg = Aggregator::new();
    for (i, e) in events.iter().enumerate() {
        agg.add(&e.observation(), e.at, i as u128);
    }
    let all = cluster(&agg, &Params::default(), &[]);
    let first = all.clusters[0].clone();
    let without = cluster(&agg, &Params::default(), std::slice::from_ref(&first.profile));
    assert_eq!(without.clusters.len(), all.clusters.len() - 1);
    assert!(without.excluded_events >= first.events * 9 / 10, "{} of {}", without.excluded_events, first.events);
    assert!(without.clusters.iter().all(|c| c.profile.similarity(&first.profile) < Params::default().min_similarity));
}

#[test]
fn a_sparse_event_does_not_bridge_two_agents_on_one_host() {
    let tools_a = ["query_sql".to_owned(), "export_csv".to_owned()];
    let tools_b = ["send_email".to_owned(), "read_email".to_owned()];
    let mut agg = Aggregator::new();
    let mut r = 0u128;
    for i in 0..30 {
        for (process, ua, key, tools) in [
            ("python3 report_agent.py", "langchain/0.2.1", "sha256:aaaa", &tools_a),
            ("node /srv/mailer/mailer.js", "OpenAI/JS 4.52.0", "sha256:bbbb", &tools_b),
        ] {
            let ip = format!("10.0.0.{}", i + 2);
            let obs = Observation {
                source: "gateway",
                host: Some("jupyter-1.corp"),
                ip: Some(&ip),
                process: Some(process),
                user_agent: Some(ua),
                api_key_fingerprint: Some(key),
                endpoint: Some("https://api.openai.com/v1/chat/completions"),
                model: Some("gpt-4o"),
                tool_calls: tools,
                ..Observation::default()
            };
            r += 1;
            agg.add(&obs, i, r);
        }
    }
    // Events that only say "this host, this network, this endpoint".
    for i in 0..20 {
        let obs = Observation {
            source: "edr",
            host: Some("jupyter-1.corp"),
            ip: Some("10.0.0.99"),
            endpoint: Some("https://api.openai.com/v1/chat/completions"),
            model: Some("gpt-4o"),
            ..Observation::default()
        };
        r += 1;
        agg.add(&obs, 100 + i, r);
    }
    let found = cluster(&agg, &Params::default(), &[]);
    assert_eq!(found.clusters.len(), 2, "{:#?}", found.clusters.iter().map(|c| &c.profile).collect::<Vec<_>>());
}

#[test]
fn similarity_weighs_what_both_carry() {
    let event = |host: Option<&'static str>, process: Option<&'static str>, agent: Option<&'static str>| {
        Observation {
            source: "gateway",
            host,
            process,
            agent_id: agent,
            user_agent: Some("langchain/0.2.3"),
            ..Observation::default()
        }
        .profile()
    };
    let a = event(Some("billing-1.prod"), Some("python3 billing.py"), None);
    let b = event(Some("billing-2.prod"), Some("python3.11 billing.py"), None);
    assert!((a.similarity(&b) - 1.0).abs() < 1e-9, "replicas and versions fold away");
    let c = event(Some("billing-1.prod"), Some("python3 other.py"), None);
    assert!(a.similarity(&c) < 0.7);
    // Too little carried by both to say anything.
    let thin = Observation { source: "edr", ..Observation::default() }.profile();
    assert_eq!(a.similarity(&thin), 0.0);
    // Different agent ids are different agents.
    let x = event(Some("h"), Some("p"), Some("0191c2d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d"));
    let y = event(Some("h"), Some("p"), Some("0191c2d4-5e6f-7a8b-9c0d-000000000000"));
    assert_eq!(x.similarity(&y), 0.0);
}

#[test]
fn clusters_carry_a_fingerprint_samples_and_a_suggestion() {
    let cfg = SynthConfig { agents: 5, events: 1_000, background_share: 0.0, ..SynthConfig::default() };
    let (_, _, clustering) = evaluate(&cfg);
    let c = &clustering.clusters[0];
    assert!(c.samples.len() == SAMPLES);
    assert!(c.first <= c.last);
    assert!(!c.profile.get(Field::Process).is_empty());
    assert!(c.profile.get(Field::Host).iter().all(|(_, share)| (MIN_SHARE..=1.0).contains(share)));
    let s = infer::suggest(&c.profile);
    assert!(!s.name.is_empty() && !s.capabilities.is_empty());
    assert!(infer::confidence(c) > 0.5);
}
