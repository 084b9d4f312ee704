//! `--help` as each subcommand should show it: its own options, the
//! server's under `serve`, the platforms' last under their own heading.

use clap::{Arg, Args, CommandFactory};

use super::platform_options::PlatformOptions;
use super::{Cli, ServeOptions};

/// The heading the platforms' options are listed under in `--help`.
const PLATFORMS_HEADING: &str = "Where the platforms are (tests and proxies point them elsewhere)";

/// The command line as `--help` shows it: the server's options belong to
/// the top level (`serve` when the subcommand is omitted) and to `serve`,
/// the platforms' also to `migration import` (it verifies tokens with
/// them), and no other subcommand lists them.
pub(super) fn help_view() -> clap::Command {
    let full = Cli::command();
    let ids_of = |command: clap::Command| -> Vec<clap::Id> {
        command
            .get_arguments()
            .map(|argument| argument.get_id().clone())
            .collect()
    };
    let server = ids_of(ServeOptions::augment_args(clap::Command::new("serve")));
    let platforms = ids_of(PlatformOptions::augment_args(clap::Command::new(
        "platforms",
    )));
    // The platforms' options (about 60) come last, under their own heading.
    let shown = |argument: Arg| -> Arg {
        let global = argument.is_global_set() && !server.contains(argument.get_id());
        let heading = platforms
            .contains(argument.get_id())
            .then_some(PLATFORMS_HEADING);
        argument.global(global).help_heading(heading)
    };
    let local = |ids: &[clap::Id]| -> Vec<Arg> {
        full.get_arguments()
            .filter(|argument| ids.contains(argument.get_id()))
            .map(|argument| shown(argument.clone()))
            .collect()
    };
    let (server_arguments, platform_arguments) = (local(&server), local(&platforms));
    full.clone()
        .mut_args(shown)
        .mut_subcommand("serve", |serve| serve.args(server_arguments))
        .mut_subcommand("migration", |migration| {
            migration.mut_subcommand("import", |import| import.args(platform_arguments))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help_of(path: &[&str]) -> String {
        let mut command = help_view();
        command.build();
        let found = path.iter().fold(&mut command, |command, name| {
            command
                .find_subcommand_mut(name)
                .expect("the subcommand exists")
        });
        found.render_long_help().to_string()
    }

    #[test]
    fn each_subcommands_help_lists_its_own_options() {
        let import = help_of(&["migration", "import"]);
        assert!(import.contains("--client"), "{import}");
        assert!(import.contains("--xero-api-base"), "{import}");
        assert!(import.contains("--database-url"), "{import}");
        assert!(!import.contains("--bind"), "{import}");
        assert!(!import.contains("--sync-workers"), "{import}");
        let key = help_of(&["api-key", "create"]);
        assert!(
            key.contains("--client") && key.contains("--database-url"),
            "{key}"
        );
        assert!(
            !key.contains("--bind") && !key.contains("--xero-api-base"),
            "{key}"
        );
        let serve = help_of(&["serve"]);
        assert!(
            serve.contains("--bind") && serve.contains("--xero-api-base"),
            "{serve}"
        );
        let top = help_view().render_long_help().to_string();
        assert!(top.contains("--bind") && top.contains("migration"), "{top}");
    }
}
