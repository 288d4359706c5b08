//! Policy engine port. The policy issue extends it with validation and evaluation of tenant
//! policies; for now it proves the engine works.

use crate::error::Result;

pub trait PolicyEngine: Send + Sync {
    /// Compiles and evaluates a tiny built-in module; `Unavailable` if the engine fails.
    fn self_test(&self) -> Result<()>;
    /// The engine's name, for `/status`.
    fn name(&self) -> &'static str;
}
