//! The policy worker of the test servers: `agentgov policy-worker`, for servers started
//! inside a test process (whose own binary is the test harness).

fn main() -> std::process::ExitCode {
    agentgov_policy_rego::worker::main_from_args()
}
