//! The records the domain works on.

pub mod api_key;
pub mod role;
pub mod session;
pub mod tenant;
pub mod user;

pub use api_key::{ApiKey, ApiKeyKind};
pub use role::{Permission, Role};
pub use session::Session;
pub use tenant::Tenant;
pub use user::{User, UserStatus};
