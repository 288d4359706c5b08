//! Command line: `serve`, `migrate`, `tenant create`, `user set-role`, `openapi`.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use agentgov_domain::services::NewTenant;
use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use crate::config::{Config, Database, LogFormat};

#[derive(Debug, Parser)]
#[command(name = "agentgov", version, about = "Governs AI agents for many tenants")]
pub struct Cli {
    /// A TOML configuration file (environment variables override it).
    #[arg(long, global = true, env = "AGENTGOV_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage tenants.
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// Manage users as the platform operator.
    #[command(subcommand)]
    User(UserCommand),
    /// Print the OpenAPI document (JSON) and exit.
    Openapi,
}

#[derive(Debug, Subcommand)]
pub enum TenantCommand {
    /// Create a tenant with its first admin user and API key (printed once, as JSON).
    /// The admin password is read from standard input.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        admin_email: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Set a user's role, `super_admin` included (nobody may grant a role above their own,
    /// so this is how the first Super Admin is made). Audited in the user's tenant.
    SetRole {
        #[arg(long)]
        email: String,
        /// viewer, analyst, admin or super_admin.
        #[arg(long)]
        role: agentgov_domain::model::Role,
    },
}

fn init_logging(config: &Config) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&config.log_level));
    // Colours only on a terminal: a log file or journal gets plain text, and no request pays
    // for escape codes nobody sees (every request's span fields are formatted as it opens).
    let ansi = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    let _ = match config.log_format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(Command::Openapi) = cli.command {
        let doc = agentgov_api::openapi().to_pretty_json().context("rendering OpenAPI")?;
        println!("{doc}");
        return Ok(());
    }
    let config = Config::load(cli.config.as_deref())?;
    init_logging(&config);
    tracing::info!(config = ?config, "configuration");
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => crate::serve::serve(config).await,
        Command::Migrate => {
            crate::wiring::open_store(&config, true).await?;
            let what = match config.database()? {
                Database::Sqlite(path) => path.display().to_string(),
                Database::Postgres(url) => crate::config::redact_url(&url),
            };
            eprintln!("migrations applied to {what}");
            Ok(())
        }
        Command::Tenant(TenantCommand::Create { name, admin_email }) => {
            let mut password = String::new();
            std::io::stdin().read_to_string(&mut password).context("reading the admin password from stdin")?;
            let password = password.trim_end_matches(['\r', '\n']).to_owned();
            if password.is_empty() {
                bail!("pipe the admin password on standard input, e.g. `echo \"$PW\" | agentgov tenant create …`");
            }
            let services = crate::wiring::build_services(&config).await?.services;
            let req = NewTenant { name, admin_email, admin_password: password };
            let created = services.tenants.create(req, "cli").await.map_err(|e| match e {
                agentgov_domain::DomainError::Validation(errs) => anyhow::anyhow!(
                    "invalid: {}",
                    errs.iter().map(|e| format!("{} {}", e.field, e.message)).collect::<Vec<_>>().join("; ")
                ),
                other => anyhow::anyhow!(other),
            })?;
            println!("{}", serde_json::to_string_pretty(&created)?);
            Ok(())
        }
        Command::User(UserCommand::SetRole { email, role }) => {
            let user = set_role(&config, &email, role).await?;
            println!("{}", serde_json::to_string_pretty(&user)?);
            Ok(())
        }
        Command::Openapi => Ok(()),
    }
}

/// `agentgov user set-role`: sets the role of the user with `email` (and has it audited).
pub async fn set_role(
    config: &Config,
    email: &str,
    role: agentgov_domain::model::Role,
) -> anyhow::Result<agentgov_domain::model::User> {
    let services = crate::wiring::build_services(config).await?.services;
    Ok(services.users.set_role_as_operator(email, role, "cli").await?)
}
