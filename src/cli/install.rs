//! Putting tmuxd into a user's system: shell completions and man pages
//! generated from the same definitions as `--help`, and a systemd user unit.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use super::args::{Cli, CompletionsArgs, ManArgs, ServiceArgs};
use super::client::ClientError;
use super::output::{print, write_stdout};

pub fn completions(args: CompletionsArgs) -> Result<(), ClientError> {
    write_stdout(&super::complete::registration(args.shell)?)
}

pub fn man(args: ManArgs) -> Result<(), ClientError> {
    let command = Cli::command();
    let Some(dir) = args.out_dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        page.extend_from_slice(super::manpage::extra_sections().as_bytes());
        return write_stdout(&page);
    };
    std::fs::create_dir_all(&dir)?;
    let mut written = vec![write_page(&dir, "tmuxd", command.clone())?];
    std::fs::OpenOptions::new()
        .append(true)
        .open(&written[0])?
        .write_all(super::manpage::extra_sections().as_bytes())?;
    for sub in command.get_subcommands() {
        let name = format!("tmuxd-{}", sub.get_name());
        written.push(write_page(
            &dir,
            &name,
            sub.clone()
                .display_name(name.clone())
                .bin_name(name.clone()),
        )?);
    }
    for path in written {
        print(&format!("{}\n", path.display()))?;
    }
    Ok(())
}

fn write_page(dir: &Path, name: &str, command: clap::Command) -> Result<PathBuf, ClientError> {
    let path = dir.join(format!("{name}.1"));
    let mut file = std::fs::File::create(&path)?;
    clap_mangen::Man::new(command).render(&mut file)?;
    file.flush()?;
    Ok(path)
}

/// The systemd user unit that runs `exe serve`.
pub fn service_unit(exe: &Path, config: Option<&Path>) -> String {
    let mut exec = format!("{} serve", systemd_quote(&exe.to_string_lossy()));
    if let Some(config) = config {
        exec.push_str(&format!(
            " --config {}",
            systemd_quote(&config.to_string_lossy())
        ));
    }
    format!(
        "\
[Unit]
Description=tmuxd: supervise tmux sessions over HTTP
Documentation=man:tmuxd(1)
After=network.target

[Service]
Type=simple
ExecStart={exec}
Restart=on-failure
RestartSec=2
# tmux servers that tmuxd starts live in this unit's cgroup: stopping or
# restarting tmuxd must end tmuxd alone, never the sessions.
KillMode=process

[Install]
WantedBy=default.target
"
    )
}

/// Quotes a word for an `ExecStart=` line when it needs it.
fn systemd_quote(word: &str) -> String {
    if !word.is_empty() && !word.contains(|c: char| c.is_whitespace() || "\"'\\%$;".contains(c)) {
        return word.to_owned();
    }
    let escaped = word
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%")
        .replace('$', "$$");
    format!("\"{escaped}\"")
}

/// `$XDG_CONFIG_HOME/systemd/user/tmuxd.service`, else under `~/.config`.
fn unit_path() -> Result<PathBuf, ClientError> {
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| ClientError::Usage("neither XDG_CONFIG_HOME nor HOME is set".into()))?;
    Ok(config_home.join("systemd/user/tmuxd.service"))
}

/// The settings this shell gives tmuxd through `TMUXD_*` (the variable, and
/// its config key) that a unit started by systemd would not see.
fn env_settings(get: impl Fn(&str) -> Option<String>) -> Vec<(&'static str, &'static str)> {
    let config = ("TMUXD_CONFIG", "--config");
    std::iter::once(config)
        .chain(
            crate::config::ENV_VARS
                .iter()
                .map(|(key, var)| (*var, *key)),
        )
        .filter(|(var, _)| get(var).is_some_and(|v| !v.is_empty()))
        .collect()
}

/// Why the service may run with other settings than this shell's, or `None`.
fn env_warning(settings: &[(&str, &str)]) -> Option<String> {
    if settings.is_empty() {
        return None;
    }
    let vars: Vec<&str> = settings.iter().map(|(var, _)| *var).collect();
    let keys: Vec<&str> = settings.iter().map(|(_, key)| *key).collect();
    Some(format!(
        "tmuxd: warning: this shell sets {}, which the service will not see (systemd starts it \
         with its own environment); put them in the config file the unit reads ({}), or in an \
         Environment= line of the unit\n",
        vars.join(", "),
        keys.join(", ")
    ))
}

pub fn service_install(args: ServiceArgs) -> Result<(), ClientError> {
    if let Some(warning) = env_warning(&env_settings(|var| std::env::var(var).ok())) {
        eprint!("{warning}");
    }
    let exe = std::env::current_exe()?;
    let config = args.config.map(std::path::absolute).transpose()?;
    let unit = service_unit(&exe, config.as_deref());
    if args.print {
        return print(&unit);
    }
    let path = unit_path()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = path.with_extension("service.tmp");
    std::fs::write(&temp, &unit)?;
    std::fs::rename(&temp, &path)?;
    print(&format!(
        "wrote {}\n\
         start it now and at every login:\n\
         \x20 systemctl --user daemon-reload\n\
         \x20 systemctl --user enable --now tmuxd\n\
         keep it (and your sessions) running after you log out:\n\
         \x20 loginctl enable-linger \"$USER\"\n\
         logs: journalctl --user -u tmuxd\n",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tmuxd_settings_of_the_shell_are_named() {
        let env = |set: &'static [(&'static str, &'static str)]| {
            move |var: &str| {
                set.iter()
                    .find(|(k, _)| *k == var)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(env_settings(env(&[("HOME", "/h"), ("TMUXD_BIND", "")])), []);
        let found = env_settings(env(&[
            ("TMUXD_TMUX_BIN", "/x/tmux"),
            ("TMUXD_BIND", "0.0.0.0:1"),
            ("TMUXD_CONFIG", "/c.toml"),
        ]));
        assert_eq!(
            found,
            [
                ("TMUXD_CONFIG", "--config"),
                ("TMUXD_BIND", "bind"),
                ("TMUXD_TMUX_BIN", "tmux.bin")
            ]
        );
        assert_eq!(env_warning(&[]), None);
        let warning = env_warning(&found).unwrap();
        assert!(
            warning.contains("TMUXD_CONFIG, TMUXD_BIND, TMUXD_TMUX_BIN"),
            "{warning}"
        );
        assert!(warning.contains("(--config, bind, tmux.bin)"), "{warning}");
    }

    #[test]
    fn the_unit_never_kills_tmux() {
        let unit = service_unit(Path::new("/home/u/.cargo/bin/tmuxd"), None);
        assert!(
            unit.contains("\nExecStart=/home/u/.cargo/bin/tmuxd serve\n"),
            "{unit}"
        );
        assert!(unit.contains("\nKillMode=process\n"));
        assert!(unit.contains("\nRestart=on-failure\n"));
        assert!(unit.contains("\nWantedBy=default.target\n"));
    }

    #[test]
    fn odd_paths_are_quoted() {
        let unit = service_unit(
            Path::new("/opt/my tools/tmuxd"),
            Some(Path::new("/c/100%.toml")),
        );
        assert!(
            unit.contains("ExecStart=\"/opt/my tools/tmuxd\" serve --config \"/c/100%%.toml\""),
            "{unit}"
        );
    }
}
