/// jemalloc instead of glibc's malloc: the request path allocates a lot from many threads,
/// where glibc's arena locks and consolidation cost a third more CPU per policy check (see
/// BENCHMARKS.md).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::Parser;

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    let cli = agentgov_server::cli::Cli::parse();
    match agentgov_server::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("agentgov: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
