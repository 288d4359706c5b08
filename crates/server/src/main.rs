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
