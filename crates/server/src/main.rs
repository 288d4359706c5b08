/// jemalloc instead of glibc's malloc: the request path allocates a lot from many threads,
/// where glibc's arena locks and consolidation cost a third more CPU per policy check (see
/// BENCHMARKS.md).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::Parser;

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    // A policy worker (started by the server itself) answers on its standard streams only.
    if std::env::args().nth(1).as_deref() == Some(agentgov_policy_rego::worker::WORKER_ARG) {
        return agentgov_policy_rego::worker::main_from_args();
    }
    let cli = agentgov_server::cli::Cli::parse();
    match agentgov_server::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("agentgov: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
