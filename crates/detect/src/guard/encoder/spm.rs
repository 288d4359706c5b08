//! SentencePiece unigram tokenisation, as the `sentencepiece` library does it for the
//! multilingual Universal Sentence Encoder's `sp.model`: the `nmt_nfkc` normaliser compiled
//! into the model (a darts-clone trie of rewrite rules), whitespace folded to `▁` with a
//! leading one, then the Viterbi path of highest total piece score. Unknown characters are
//! one `<unk>` each (not fused), ties keep the earliest-starting piece. The golden test
//! compares the ids with the reference package's tokenizer.

use yada::DoubleArray;
use yada::builder::DoubleArrayBuilder;

use super::LoadError;

pub const UNK: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;
/// `sentencepiece`'s penalty for an unknown character, under the lowest piece score.
const UNK_PENALTY: f32 = 10.0;
const SPACE: &str = "\u{2581}";

/// The tokenizer of one `sp.model`.
pub struct Tokenizer {
    /// Piece ids by their bytes (a double-array trie).
    pieces: DoubleArray<Vec<u8>>,
    scores: Vec<f32>,
    unk_score: f32,
    normalizer: Normalizer,
}

impl Tokenizer {
    /// Reads a serialised `ModelProto`: its pieces (field 1: piece 1, score 2, type 3) and the
    /// normaliser's precompiled character map (field 3, its field 2).
    pub fn from_model(bytes: &[u8]) -> Result<Self, LoadError> {
        let bad = |why: &'static str| LoadError::Format(format!("sp.model: {why}"));
        let mut keys: Vec<(Vec<u8>, u32)> = Vec::new();
        let mut scores = Vec::new();
        let mut charsmap: &[u8] = &[];
        for field in Fields(bytes) {
            match field.map_err(bad)? {
                (1, Value::Bytes(piece)) => {
                    let (mut text, mut score, mut kind) = (None, 0.0f32, 1u64);
                    for f in Fields(piece) {
                        match f.map_err(bad)? {
                            (1, Value::Bytes(t)) => text = Some(t),
                            (2, Value::Fixed32(s)) => score = f32::from_bits(s),
                            (3, Value::Varint(k)) => kind = k,
                            _ => {}
                        }
                    }
                    let id = u32::try_from(scores.len()).map_err(|_| bad("too many pieces"))?;
                    let text = text.ok_or_else(|| bad("a piece without text"))?;
                    // Normal (1) and user-defined (4) pieces are matched in text; unknown,
                    // control and unused ones are not.
                    if matches!(kind, 1 | 4) && !text.is_empty() {
                        keys.push((text.to_vec(), id));
                    }
                    scores.push(score);
                }
                (3, Value::Bytes(spec)) => {
                    for f in Fields(spec) {
                        if let (2, Value::Bytes(map)) = f.map_err(bad)? {
                            charsmap = map;
                        }
                    }
                }
                _ => {}
            }
        }
        if keys.is_empty() {
            return Err(bad("no pieces"));
        }
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        keys.dedup_by(|a, b| a.0 == b.0);
        let trie = DoubleArrayBuilder::build(&keys).map_err(|_| bad("the pieces do not form a trie"))?;
        let pieces = DoubleArray::new(trie).map_err(|_| bad("the pieces do not form a trie"))?;
        let unk_score = scores.iter().copied().fold(f32::INFINITY, f32::min) - UNK_PENALTY;
        Ok(Self { pieces, scores, unk_score, normalizer: Normalizer::new(charsmap).map_err(bad)? })
    }

    pub fn vocab_size(&self) -> usize {
        self.scores.len()
    }

    /// The ids of `text` between `<s>` and `</s>` (an empty text is one `<unk>`).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalizer.normalize(text);
        let mut ids = Vec::with_capacity(normalized.len() / 3 + 3);
        ids.push(BOS);
        if normalized.is_empty() {
            ids.push(UNK);
        } else {
            self.viterbi(&normalized, &mut ids);
        }
        ids.push(EOS);
        ids
    }

    /// Appends the best segmentation of `text` to `out`. For each end position it keeps the
    /// best-scoring piece ending there (the earliest start on ties, as `sentencepiece`).
    fn viterbi(&self, text: &str, out: &mut Vec<u32>) {
        let bytes = text.as_bytes();
        let n = bytes.len();
        // Summed in f64, as the reference does: in f32, near-ties of long texts come out the
        // other way.
        let mut best = vec![f64::NEG_INFINITY; n + 1];
        let mut from = vec![0usize; n + 1];
        let mut piece = vec![UNK; n + 1];
        best[0] = 0.0;
        for (start, ch) in text.char_indices() {
            let base = best[start];
            let single = start + ch.len_utf8();
            let mut has_single = false;
            for (id, len) in self.pieces.common_prefix_search(&bytes[start..]) {
                let end = start + len;
                let score = base + f64::from(self.scores.get(id as usize).copied().unwrap_or(self.unk_score));
                if score > best[end] {
                    best[end] = score;
                    from[end] = start;
                    piece[end] = id;
                }
                has_single |= end == single;
            }
            if !has_single {
                let score = base + f64::from(self.unk_score);
                if score > best[single] {
                    best[single] = score;
                    from[single] = start;
                    piece[single] = UNK;
                }
            }
        }
        let at = out.len();
        let mut end = n;
        while end > 0 {
            out.push(piece[end]);
            end = from[end];
        }
        out[at..].reverse();
    }
}

/// The `nmt_nfkc` normaliser as `sentencepiece` runs it: at each position the longest rule of
/// the character map that matches, else the character itself; runs of whitespace folded to
/// one `▁`, none at either end, one added in front.
struct Normalizer {
    /// Darts-clone units of the rules' trie.
    units: Vec<u32>,
    /// The replacements, each ended by a NUL.
    replacements: Vec<u8>,
}

impl Normalizer {
    fn new(charsmap: &[u8]) -> Result<Self, &'static str> {
        if charsmap.is_empty() {
            return Ok(Self { units: Vec::new(), replacements: Vec::new() });
        }
        let size = charsmap.get(..4).ok_or("character map truncated")?;
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        let trie = charsmap.get(4..4 + size).filter(|t| t.len() % 4 == 0).ok_or("character map truncated")?;
        let units = trie.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok(Self { units, replacements: charsmap[4 + size..].to_vec() })
    }

    /// The longest rule matching the start of `input`: its length and replacement.
    fn longest(&self, input: &[u8]) -> Option<(usize, &[u8])> {
        let unit = |at: usize| self.units.get(at).copied();
        let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
        let mut at = offset(unit(0)?);
        let mut found = None;
        for (i, &c) in input.iter().enumerate() {
            if c == 0 {
                break;
            }
            at ^= c as usize;
            let u = unit(at)?;
            if u & ((1 << 31) | 0xFF) != u32::from(c) {
                break;
            }
            at ^= offset(u);
            if (u >> 8) & 1 == 1 {
                let value = (unit(at)? & 0x7FFF_FFFF) as usize;
                let rest = self.replacements.get(value..)?;
                let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                found = Some((i + 1, &rest[..end]));
            }
        }
        found
    }

    fn normalize(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len() + 3);
        let mut pos = 0;
        // Whitespace at the start is dropped (after the rules, as `sentencepiece` does).
        let mut previous_space = true;
        while pos < bytes.len() {
            let (len, replacement): (usize, &[u8]) = match self.longest(&bytes[pos..]) {
                Some(found) => found,
                None => {
                    let len = text[pos..].chars().next().map_or(1, char::len_utf8);
                    (len, &bytes[pos..pos + len])
                }
            };
            pos += len;
            // A replacement is valid UTF-8 unless the map is corrupt: then the character.
            let replacement = std::str::from_utf8(replacement).unwrap_or("\u{fffd}");
            let mut piece = replacement;
            if previous_space {
                piece = piece.trim_start_matches(' ');
            }
            if piece.is_empty() {
                continue;
            }
            if out.is_empty() {
                out.push_str(SPACE);
            }
            for c in piece.chars() {
                if c == ' ' {
                    out.push_str(SPACE);
                } else {
                    out.push(c);
                }
            }
            previous_space = piece.ends_with(' ');
        }
        while out.ends_with(SPACE) {
            out.truncate(out.len() - SPACE.len());
        }
        out
    }
}

/// One field of a protocol-buffer message.
enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
    Fixed64,
}

/// The fields of a serialised protocol-buffer message, in order.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn varint(&mut self) -> Result<u64, &'static str> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.0.split_first().ok_or("truncated")?;
            self.0 = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long")
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err("truncated");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let field = (|| {
            let key = self.varint()?;
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    self.take(8)?;
                    Value::Fixed64
                }
                2 => {
                    let len = usize::try_from(self.varint()?).map_err(|_| "length too large")?;
                    Value::Bytes(self.take(len)?)
                }
                5 => {
                    let b = self.take(4)?;
                    Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                }
                _ => return Err("unknown wire type"),
            };
            Ok((key >> 3, value))
        })();
        if field.is_err() {
            self.0 = &[];
        }
        Some(field)
    }
}
