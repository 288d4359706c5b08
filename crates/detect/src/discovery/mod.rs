//! Shadow-agent discovery: grouping observed activity into the unregistered agents behind
//! it, without being told how many there are.
//!
//! 1. Each event is **normalised** ([`normalize`]): replica numbers, versions, the host part
//!    of an address, ids in paths and release dates are folded away, so the events of one
//!    agent share values.
//! 2. Events with the same identifying values (agent id, API key fingerprint, host, process,
//!    user agent, network) are **aggregated** into one weighted signature; the rest (tools
//!    called, endpoints, models, sources) are counted per signature as bags
//!    ([`Aggregator`]). A million events make a few thousand signatures plus the one-off
//!    background.
//! 3. Signatures are **clustered** with a weighted DBSCAN ([`cluster`]): two are neighbours
//!    when their similarity ([`Profile::similarity`]: field-weighted agreement over the
//!    fields both carry, cosine for bags) reaches `min_similarity`; a signature is a core
//!    when it is described well enough to anchor a group (`min_core_evidence`) and its
//!    neighbourhood holds `min_events` events. Clusters grow from cores; a sparse signature
//!    joins the cluster of its most similar core, or stays noise. Neighbours are found
//!    through inverted lists of identifying values; a value shared by more than
//!    `max_posting` signatures (a common user agent) identifies nothing and is not used to
//!    find them.
//! 4. Each cluster is summarised as a [`Profile`] (its fingerprint: the common values of
//!    each field with their shares), with a name, capabilities and a confidence
//!    ([`infer`]).
//!
//! Future events are matched against the fingerprints of decided candidates with the same
//! similarity, so confirmation and dismissal carry over to new activity.

pub mod infer;
pub mod metrics;
pub mod normalize;
pub mod synth;

use std::collections::HashMap;

/// The attributes compared, identifying ones (one value per event) first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    AgentId,
    ApiKey,
    Host,
    Process,
    UserAgent,
    IpPrefix,
    Tools,
    Endpoint,
    Model,
    Source,
}

/// How many fields there are.
pub const FIELDS: usize = 10;
/// The identifying fields are the first `KEYS`: one value per event, part of a signature.
pub const KEYS: usize = 6;

impl Field {
    pub const ALL: [Field; FIELDS] = [
        Field::AgentId,
        Field::ApiKey,
        Field::Host,
        Field::Process,
        Field::UserAgent,
        Field::IpPrefix,
        Field::Tools,
        Field::Endpoint,
        Field::Model,
        Field::Source,
    ];

    /// The field's name in a fingerprint.
    pub fn name(self) -> &'static str {
        match self {
            Field::AgentId => "agent_id",
            Field::ApiKey => "api_key_fingerprint",
            Field::Host => "host",
            Field::Process => "process",
            Field::UserAgent => "user_agent",
            Field::IpPrefix => "ip_prefix",
            Field::Tools => "tool_calls",
            Field::Endpoint => "endpoint",
            Field::Model => "model",
            Field::Source => "source",
        }
    }

    pub fn parse(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How much agreement on this field says two observations are one agent.
    pub fn weight(self) -> f64 {
        match self {
            Field::AgentId => 6.0,
            Field::ApiKey => 5.0,
            Field::Host | Field::Process | Field::Tools => 3.0,
            Field::UserAgent => 2.0,
            Field::IpPrefix => 1.5,
            Field::Endpoint | Field::Model => 1.0,
            Field::Source => 0.5,
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Whether its values are looked up to find neighbours.
    fn finds_neighbours(self) -> bool {
        // Neighbours share an identifying value (agreement on bags alone never reaches the
        // threshold), so only those are looked up.
        self.index() < KEYS
    }

    fn normalize(self, raw: &str) -> Option<String> {
        match self {
            Field::AgentId | Field::ApiKey | Field::Source => normalize::ident(raw),
            Field::Host => normalize::host(raw),
            Field::Process => normalize::process(raw),
            Field::UserAgent => normalize::user_agent(raw),
            Field::IpPrefix => normalize::ip_prefix(raw),
            Field::Tools => normalize::tool(raw),
            Field::Endpoint => normalize::endpoint(raw),
            Field::Model => normalize::model(raw),
        }
    }
}

/// Agreement below this weight of fields carried by both says too little to compare.
pub const MIN_EVIDENCE: f64 = 4.0;
/// Nor does agreement on identifying fields weighing less than this (a host alone: agents
/// share machines).
pub const MIN_SHARED_IDENTITY: f64 = 4.5;
/// From this many events on, a signature or fingerprint not carrying an identifying field
/// is taken to have none (rather than to have lost it).
pub const HEAVY_EVENTS: u64 = 20;
/// A fingerprint keeps the values of a field held by at least this share of its events.
pub const MIN_SHARE: f64 = 0.05;
/// A fingerprint keeps at most this many values per field.
pub const MAX_VALUES: usize = 8;

/// One observed event's attributes, as the source reported them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Observation<'a> {
    pub source: &'a str,
    pub host: Option<&'a str>,
    pub ip: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub process: Option<&'a str>,
    pub endpoint: Option<&'a str>,
    pub model: Option<&'a str>,
    pub tool_calls: &'a [String],
    pub api_key_fingerprint: Option<&'a str>,
    pub agent_id: Option<&'a str>,
}

impl<'a> Observation<'a> {
    /// The raw values of each field.
    fn raw(&self, field: Field) -> RawValues<'a> {
        let one = |v: Option<&'a str>| RawValues::One(v);
        match field {
            Field::AgentId => one(self.agent_id),
            Field::ApiKey => one(self.api_key_fingerprint),
            Field::Host => one(self.host),
            Field::Process => one(self.process),
            Field::UserAgent => one(self.user_agent),
            Field::IpPrefix => one(self.ip),
            Field::Tools => RawValues::Many(self.tool_calls),
            Field::Endpoint => one(self.endpoint),
            Field::Model => one(self.model),
            Field::Source => one(Some(self.source)),
        }
    }

    /// The event as a profile: each normalised value with weight 1.
    pub fn profile(&self) -> Profile {
        let mut profile = Profile { events: 1, ..Profile::default() };
        for field in Field::ALL {
            let values = &mut profile.fields[field.index()];
            self.raw(field).for_each(|raw| {
                if let Some(v) = field.normalize(raw)
                    && !values.iter().any(|(seen, _)| *seen == v)
                {
                    values.push((v, 1.0));
                }
            });
        }
        profile
    }
}

enum RawValues<'a> {
    One(Option<&'a str>),
    Many(&'a [String]),
}

impl<'a> RawValues<'a> {
    fn for_each(self, mut f: impl FnMut(&'a str)) {
        match self {
            RawValues::One(v) => v.into_iter().for_each(f),
            RawValues::Many(vs) => vs.iter().for_each(|v| f(v)),
        }
    }
}

/// Values per field with their weights: an event's (weight 1 each), or a fingerprint's
/// (the share of events that carry the field which have the value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub fields: [Vec<(String, f64)>; FIELDS],
    /// Events it stands for (1 for an event).
    pub events: u64,
}

impl Profile {
    pub fn get(&self, field: Field) -> &[(String, f64)] {
        &self.fields[field.index()]
    }

    pub fn set(&mut self, field: Field, values: Vec<(String, f64)>) {
        self.fields[field.index()] = values;
    }

    /// How alike two profiles are (0..1), as [`cluster`] compares signatures.
    pub fn similarity(&self, other: &Profile) -> f64 {
        similarity(&self.fields, self.events >= HEAVY_EVENTS, &other.fields, other.events >= HEAVY_EVENTS, &|_, _| 1.0)
    }
}

/// Field-weighted agreement over the fields both carry: an identifying field agrees by the
/// `specificity` of a value the two share (1 for a value that identifies, less for one
/// common to many deployments); a bag by the cosine of its weights.
///
/// An identifying field that only one carries counts as a disagreement when the other is
/// `heavy` (so many events that its not carrying the field is a fact, not a gap). The
/// result is 0 when the identifying fields carried by both weigh less than
/// [`MIN_SHARED_IDENTITY`] or all the fields less than [`MIN_EVIDENCE`], and when both name
/// an agent id and share none.
fn similarity<V: PartialEq>(
    a: &[Vec<(V, f64)>; FIELDS],
    a_heavy: bool,
    b: &[Vec<(V, f64)>; FIELDS],
    b_heavy: bool,
    specificity: &dyn Fn(Field, &V) -> f64,
) -> f64 {
    let mut carried = 0.0;
    let mut identity = 0.0;
    let mut agreed = 0.0;
    for field in Field::ALL {
        let (x, y) = (&a[field.index()], &b[field.index()]);
        let w = field.weight();
        if x.is_empty() || y.is_empty() {
            if field.index() < KEYS
                && ((x.is_empty() && a_heavy && !y.is_empty()) || (y.is_empty() && b_heavy && !x.is_empty()))
            {
                carried += w;
            }
            continue;
        }
        carried += w;
        let agreement = if field.index() < KEYS {
            identity += w;
            let shared = x.iter().find(|(v, _)| y.iter().any(|(u, _)| u == v));
            if shared.is_none() && field == Field::AgentId {
                return 0.0;
            }
            shared.map_or(0.0, |(v, _)| specificity(field, v))
        } else {
            cosine(x, y)
        };
        agreed += w * agreement;
    }
    if carried < MIN_EVIDENCE || identity < MIN_SHARED_IDENTITY { 0.0 } else { agreed / carried }
}

/// The weight of the identifying fields it carries, each by the specificity of its value.
fn identity<V>(fields: &[Vec<(V, f64)>; FIELDS], specificity: &dyn Fn(Field, &V) -> f64) -> f64 {
    Field::ALL[..KEYS]
        .iter()
        .filter_map(|f| fields[f.index()].first().map(|(v, _)| f.weight() * specificity(*f, v)))
        .sum()
}

/// Whether it carries a field that names one program: an agent id, an API key or a process.
fn names_a_program<V>(fields: &[Vec<(V, f64)>; FIELDS]) -> bool {
    [Field::AgentId, Field::ApiKey, Field::Process].iter().any(|f| !fields[f.index()].is_empty())
}

fn cosine<V: PartialEq>(x: &[(V, f64)], y: &[(V, f64)]) -> f64 {
    let dot: f64 = x.iter().map(|(v, a)| y.iter().find(|(u, _)| u == v).map_or(0.0, |(_, b)| a * b)).sum();
    let norm = |z: &[(V, f64)]| z.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
    let n = norm(x) * norm(y);
    if n > 0.0 { (dot / n).min(1.0) } else { 0.0 }
}

/// Strings of one field as dense numbers (from 0).
#[derive(Debug, Default)]
struct Interner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
    /// Raw value → its normalised value's id (`u32::MAX`: normalises to nothing), so each
    /// distinct raw value is normalised once.
    raw: HashMap<String, u32>,
}

/// Raw values remembered per field before the memo starts over.
const RAW_MEMO: usize = 200_000;

impl Interner {
    fn intern(&mut self, value: String) -> u32 {
        if let Some(&id) = self.ids.get(&value) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(value.clone());
        self.ids.insert(value, id);
        id
    }

    fn normalized(&mut self, field: Field, raw: &str) -> Option<u32> {
        if let Some(&id) = self.raw.get(raw) {
            return (id != u32::MAX).then_some(id);
        }
        let id = field.normalize(raw).map(|v| self.intern(v));
        if self.raw.len() >= RAW_MEMO {
            self.raw.clear();
        }
        self.raw.insert(raw.to_owned(), id.unwrap_or(u32::MAX));
        id
    }
}

/// Events with the same identifying values, with counts of their other values.
#[derive(Debug, Clone)]
struct Signature {
    /// Per field: value id → events with it.
    fields: [Vec<(u32, f64)>; FIELDS],
    events: u64,
    /// Events that carried each bag field (at least one value).
    bag_events: [u64; FIELDS - KEYS],
    first: i64,
    last: i64,
    /// Up to [`SAMPLES`] of its newest events: (time, reference).
    samples: Vec<(i64, u128)>,
}

impl Signature {
    fn heavy(&self) -> bool {
        self.events >= HEAVY_EVENTS
    }
}

/// Sample events kept per signature and per cluster.
pub const SAMPLES: usize = 5;

/// Builds signatures from events, one at a time.
#[derive(Debug, Default)]
pub struct Aggregator {
    interners: [Interner; FIELDS],
    by_key: HashMap<[u32; KEYS], u32>,
    signatures: Vec<Signature>,
    events: u64,
}

/// Marks an identifying field an event does not carry.
const ABSENT: u32 = u32::MAX;

impl Aggregator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an event seen at `at` (any monotonic unit, e.g. unix seconds); `reference`
    /// identifies it among the samples. Answers the index of its signature.
    pub fn add(&mut self, obs: &Observation<'_>, at: i64, reference: u128) -> usize {
        self.events += 1;
        let mut key = [ABSENT; KEYS];
        for field in &Field::ALL[..KEYS] {
            if let RawValues::One(Some(raw)) = obs.raw(*field) {
                key[field.index()] = self.interners[field.index()].normalized(*field, raw).unwrap_or(ABSENT);
            }
        }
        let next = self.signatures.len() as u32;
        let index = *self.by_key.entry(key).or_insert(next) as usize;
        if index == self.signatures.len() {
            let mut fields: [Vec<(u32, f64)>; FIELDS] = Default::default();
            for (i, id) in key.iter().enumerate() {
                if *id != ABSENT {
                    fields[i].push((*id, 0.0));
                }
            }
            self.signatures.push(Signature {
                fields,
                events: 0,
                bag_events: [0; FIELDS - KEYS],
                first: at,
                last: at,
                samples: Vec::new(),
            });
        }
        let mut bag_values: [Vec<u32>; FIELDS - KEYS] = Default::default();
        for field in &Field::ALL[KEYS..] {
            let interner = &mut self.interners[field.index()];
            let values = &mut bag_values[field.index() - KEYS];
            obs.raw(*field).for_each(|raw| {
                if let Some(id) = interner.normalized(*field, raw)
                    && !values.contains(&id)
                {
                    values.push(id);
                }
            });
        }
        let sig = &mut self.signatures[index];
        sig.events += 1;
        sig.first = sig.first.min(at);
        sig.last = sig.last.max(at);
        for values in sig.fields[..KEYS].iter_mut() {
            if let Some(v) = values.first_mut() {
                v.1 += 1.0;
            }
        }
        for (i, ids) in bag_values.iter().enumerate() {
            if !ids.is_empty() {
                sig.bag_events[i] += 1;
            }
            let bag = &mut sig.fields[KEYS + i];
            for id in ids {
                match bag.iter_mut().find(|(v, _)| v == id) {
                    Some(entry) => entry.1 += 1.0,
                    None => bag.push((*id, 1.0)),
                }
            }
        }
        if sig.samples.len() < SAMPLES {
            sig.samples.push((at, reference));
        } else if let Some(oldest) = sig.samples.iter_mut().min_by_key(|(t, _)| *t)
            && oldest.0 < at
        {
            *oldest = (at, reference);
        }
        index
    }

    /// Events added.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Distinct signatures.
    pub fn signatures(&self) -> usize {
        self.signatures.len()
    }

    /// `profile` in this aggregator's value ids (values it has never seen are dropped).
    fn lookup(&self, profile: &Profile) -> [Vec<(u32, f64)>; FIELDS] {
        let mut out: [Vec<(u32, f64)>; FIELDS] = Default::default();
        for field in Field::ALL {
            let interner = &self.interners[field.index()];
            out[field.index()] =
                profile.get(field).iter().filter_map(|(v, w)| interner.ids.get(v).map(|id| (*id, *w))).collect();
        }
        out
    }

    /// A signature's identifying values, to order signatures the same whatever the order
    /// events arrived in.
    fn canon(&self, i: usize) -> Vec<&str> {
        let Some(s) = self.signatures.get(i) else { return Vec::new() };
        Field::ALL[..KEYS]
            .iter()
            .map(|f| s.fields[f.index()].first().map_or("", |(id, _)| self.name(*f, *id)))
            .collect()
    }

    /// For each identifying value, how many deployments it was seen in: the most distinct
    /// values of another of host, process and network it came with. A value seen across
    /// many deployments (a shared machine, a common client) identifies none of them.
    fn spread(&self) -> Vec<Vec<u32>> {
        const PARTNERS: [Field; 3] = [Field::Host, Field::Process, Field::IpPrefix];
        let mut pairs: std::collections::HashSet<(usize, usize, u32, u32)> = std::collections::HashSet::new();
        for s in &self.signatures {
            for f in &Field::ALL[..KEYS] {
                let Some((v, _)) = s.fields[f.index()].first() else { continue };
                for p in PARTNERS.iter().filter(|p| *p != f) {
                    if let Some((partner, _)) = s.fields[p.index()].first() {
                        pairs.insert((f.index(), p.index(), *v, *partner));
                    }
                }
            }
        }
        let mut counts: HashMap<(usize, usize, u32), u32> = HashMap::new();
        for (f, p, v, _) in pairs {
            *counts.entry((f, p, v)).or_insert(0) += 1;
        }
        let mut out: Vec<Vec<u32>> =
            Field::ALL.iter().map(|f| vec![0; self.interners[f.index()].names.len()]).collect();
        for ((f, _, v), n) in counts {
            if let Some(c) = out[f].get_mut(v as usize) {
                *c = (*c).max(n);
            }
        }
        out
    }

    fn name(&self, field: Field, id: u32) -> &str {
        self.interners[field.index()].names.get(id as usize).map_or("", String::as_str)
    }
}

/// Tunables of [`cluster`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Two signatures are neighbours at or above this similarity.
    pub min_similarity: f64,
    /// Events a core's neighbourhood (itself included) must hold.
    pub min_events: u64,
    /// Weight of the identifying fields a signature must carry to be a core, each counted by
    /// how specific its value is (it must also carry one that names a program: agent id,
    /// API key or process).
    pub min_core_identity: f64,
    /// A value held by more signatures than this is not used to find neighbours.
    pub max_posting: usize,
}

impl Default for Params {
    fn default() -> Self {
        Self { min_similarity: 0.6, min_events: 5, min_core_identity: 5.0, max_posting: 2048 }
    }
}

/// A group of events that looks like one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Its fingerprint.
    pub profile: Profile,
    pub events: u64,
    pub first: i64,
    pub last: i64,
    /// References of up to [`SAMPLES`] events: of its heaviest signatures, newest first.
    pub samples: Vec<u128>,
    /// Mean similarity of its events to its fingerprint (0..1).
    pub cohesion: f64,
    pub signatures: usize,
}

/// What [`cluster`] found.
#[derive(Debug, Clone, Default)]
pub struct Clustering {
    /// Heaviest first.
    pub clusters: Vec<Cluster>,
    /// The cluster of each signature (by the index [`Aggregator::add`] gave), `None` for
    /// noise and excluded ones.
    pub assignment: Vec<Option<usize>>,
    pub noise_events: u64,
    /// Events of signatures matching an excluded profile.
    pub excluded_events: u64,
}

/// Groups the aggregated events into clusters. Signatures as similar as
/// `params.min_similarity` to one of `exclude` (decided candidates) are left out.
pub fn cluster(agg: &Aggregator, params: &Params, exclude: &[Profile]) -> Clustering {
    let sigs = &agg.signatures;
    let n = sigs.len();
    let exclude: Vec<_> = exclude.iter().map(|p| (agg.lookup(p), p.events >= HEAVY_EVENTS)).collect();
    let excluded: Vec<bool> = sigs
        .iter()
        .map(|s| {
            exclude
                .iter()
                .any(|(e, heavy)| similarity(&s.fields, s.heavy(), e, *heavy, &|_, _| 1.0) >= params.min_similarity)
        })
        .collect();

    // Inverted lists: field → value id → signatures holding it.
    let mut postings: Vec<Vec<Vec<u32>>> =
        Field::ALL.iter().map(|f| vec![Vec::new(); agg.interners[f.index()].names.len()]).collect();
    for (i, s) in sigs.iter().enumerate() {
        if excluded[i] {
            continue;
        }
        for field in Field::ALL.into_iter().filter(|f| f.finds_neighbours()) {
            for (id, _) in &s.fields[field.index()] {
                if let Some(list) = postings[field.index()].get_mut(*id as usize) {
                    list.push(i as u32);
                }
            }
        }
    }

    let spread = agg.spread();
    let specific = |field: Field, id: &u32| -> f64 {
        // Two deployments (a second network, a moved host) still identify.
        let partners = spread[field.index()].get(*id as usize).copied().unwrap_or(1);
        1.0 / (1.0 + (f64::from(partners) / 2.0).max(1.0).ln())
    };
    let mut mark = vec![u32::MAX; n];
    let neighbours = |i: usize, mark: &mut Vec<u32>| -> Vec<(u32, f32)> {
        let mut out = Vec::new();
        let s = &sigs[i];
        mark[i] = i as u32;
        for field in Field::ALL.into_iter().filter(|f| f.finds_neighbours()) {
            for (id, _) in &s.fields[field.index()] {
                let Some(list) = postings[field.index()].get(*id as usize) else { continue };
                if list.len() > params.max_posting {
                    continue;
                }
                for &j in list {
                    if mark[j as usize] == i as u32 {
                        continue;
                    }
                    mark[j as usize] = i as u32;
                    let other = &sigs[j as usize];
                    let sim = similarity(&s.fields, s.heavy(), &other.fields, other.heavy(), &specific);
                    if sim >= params.min_similarity {
                        out.push((j, sim as f32));
                    }
                }
            }
        }
        out
    };
    let adjacency: Vec<Vec<(u32, f32)>> =
        (0..n).map(|i| if excluded[i] { Vec::new() } else { neighbours(i, &mut mark) }).collect();
    let core: Vec<bool> = (0..n)
        .map(|i| {
            !excluded[i]
                && identity(&sigs[i].fields, &specific) >= params.min_core_identity
                && names_a_program(&sigs[i].fields)
                && sigs[i].events + adjacency[i].iter().map(|(j, _)| sigs[*j as usize].events).sum::<u64>()
                    >= params.min_events
        })
        .collect();

    // Heaviest signatures seed clusters first, ties in the order of their identifying values,
    // so the outcome does not depend on arrival. `order` is that order; `rank` each
    // signature's place in it, the tie-break everywhere below.
    let mut order: Vec<usize> = (0..n).collect();
    {
        let canon: Vec<Vec<&str>> = (0..n).map(|i| agg.canon(i)).collect();
        order.sort_by(|a, b| sigs[*b].events.cmp(&sigs[*a].events).then_with(|| canon[*a].cmp(&canon[*b])));
    }
    let mut rank = vec![0usize; n];
    for (place, &i) in order.iter().enumerate() {
        rank[i] = place;
    }
    let mut label: Vec<Option<usize>> = vec![None; n];
    let mut clusters = 0usize;
    for &seed in &order {
        if !core[seed] || label[seed].is_some() {
            continue;
        }
        let c = clusters;
        clusters += 1;
        label[seed] = Some(c);
        let mut queue = vec![seed];
        while let Some(p) = queue.pop() {
            for &(q, _) in &adjacency[p] {
                let q = q as usize;
                if core[q] && label[q].is_none() {
                    label[q] = Some(c);
                    queue.push(q);
                }
            }
        }
    }
    // Sparse signatures join the cluster of their most similar core.
    for i in 0..n {
        if core[i] || excluded[i] {
            continue;
        }
        label[i] = adjacency[i]
            .iter()
            .filter(|(j, _)| core[*j as usize])
            .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| rank[b.0 as usize].cmp(&rank[a.0 as usize])))
            .and_then(|(j, _)| label[*j as usize]);
    }

    let mut members: Vec<Vec<usize>> = vec![Vec::new(); clusters];
    for (i, l) in label.iter().enumerate() {
        if let Some(c) = l {
            members[*c].push(i);
        }
    }
    // Heaviest first (`rank` order), as `summarize` expects.
    for m in members.iter_mut() {
        m.sort_by_key(|i| rank[*i]);
    }
    let mut built: Vec<(usize, Cluster)> = members.iter().enumerate().map(|(c, m)| (c, summarize(agg, m))).collect();
    let lead = |c: usize| members[c].first().map_or(usize::MAX, |i| rank[*i]);
    built.sort_by(|a, b| b.1.events.cmp(&a.1.events).then_with(|| lead(a.0).cmp(&lead(b.0))));
    let mut renumber = vec![0usize; clusters];
    for (new, (old, _)) in built.iter().enumerate() {
        renumber[*old] = new;
    }
    let assignment = label.iter().map(|l| l.map(|c| renumber[c])).collect();
    let count = |pick: &dyn Fn(usize) -> bool| (0..n).filter(|i| pick(*i)).map(|i| sigs[i].events).sum::<u64>();
    Clustering {
        clusters: built.into_iter().map(|(_, c)| c).collect(),
        assignment,
        noise_events: count(&|i| label[i].is_none() && !excluded[i]),
        excluded_events: count(&|i| excluded[i]),
    }
}

/// A cluster's fingerprint, counts, samples and cohesion from its signatures (heaviest
/// first: samples come from the heaviest).
fn summarize(agg: &Aggregator, members: &[usize]) -> Cluster {
    let sigs = &agg.signatures;
    let mut totals: [HashMap<u32, f64>; FIELDS] = Default::default();
    // Events that carry each field (for a bag: that carry at least one value).
    let mut carrying = [0.0f64; FIELDS];
    let (mut events, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
    for &i in members {
        let s = &sigs[i];
        events += s.events;
        first = first.min(s.first);
        last = last.max(s.last);
        for field in Field::ALL {
            let values = &s.fields[field.index()];
            if values.is_empty() {
                continue;
            }
            carrying[field.index()] +=
                if field.index() < KEYS { s.events as f64 } else { s.bag_events[field.index() - KEYS] as f64 };
            for (id, w) in values {
                *totals[field.index()].entry(*id).or_insert(0.0) += w;
            }
        }
    }
    let mut ids: [Vec<(u32, f64)>; FIELDS] = Default::default();
    let mut profile = Profile { events, ..Profile::default() };
    for field in Field::ALL {
        let carried = carrying[field.index()].max(1.0);
        let mut values: Vec<(u32, f64)> =
            totals[field.index()].iter().map(|(id, w)| (*id, (w / carried).min(1.0))).collect();
        values.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| agg.name(field, a.0).cmp(agg.name(field, b.0))));
        values.retain(|(_, share)| *share >= MIN_SHARE);
        values.truncate(MAX_VALUES);
        profile
            .set(field, values.iter().map(|(id, share)| (agg.name(field, *id).to_owned(), round3(*share))).collect());
        ids[field.index()] = values;
    }
    let cohesion = if events == 0 {
        0.0
    } else {
        members
            .iter()
            .map(|&i| {
                similarity(&sigs[i].fields, sigs[i].heavy(), &ids, events >= HEAVY_EVENTS, &|_, _| 1.0)
                    * sigs[i].events as f64
            })
            .sum::<f64>()
            / events as f64
    };
    let mut samples: Vec<u128> = Vec::with_capacity(SAMPLES);
    for &i in members {
        let mut own = sigs[i].samples.clone();
        own.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, r) in own {
            if samples.len() < SAMPLES && !samples.contains(&r) {
                samples.push(r);
            }
        }
        if samples.len() >= SAMPLES {
            break;
        }
    }
    Cluster { profile, events, first, last, samples, cohesion: round3(cohesion), signatures: members.len() }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests;
