//! The tables of `migrations/postgres`: the schema both stores share
//! (`agentgov_store_common::tables!`), with the kinds of column `columns` defines.

agentgov_store_common::tables!();
