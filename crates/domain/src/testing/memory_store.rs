//! PLACEHOLDER: the in-memory Store fake is being written (see store-conformance).
