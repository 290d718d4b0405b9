//! The engines' registry: one entry per database engine, the only list of
//! engines; choosing an engine for `--engine` or `--db`, refusing what an
//! engine cannot take, and the servers `strata observe` follows.
//!
//! Not for: running an engine (`engine`'s skeleton) or what an engine is
//! (`outcome`'s `EngineTraits`).

use crate::engine::DatabaseEngine;
use crate::engine_options::{self, EngineOptionMatches, EngineOptions};
use crate::options::DataRequest;
use crate::outcome::{Capability, EngineKind};
use crate::request::{EngineDefaults, EngineRequest};
use anyhow::{bail, Context};
use strata_core::metrics::Collector;

/// One database engine as the run's resolution sees it: a crate's one
/// entry in the registry (the binary's `engines.rs`), which is the only
/// list of engines; everything else asks it.
pub struct EngineEntry {
    pub kind: EngineKind,
    /// Whether a `--db` without `--engine` names this engine's server (its
    /// URL scheme); the first entry that claims it runs it.
    pub claims_db: fn(&str) -> bool,
    /// Whether the embedded default (no `--engine`, no `--db`) can run on
    /// this engine here; the error says why not.
    pub embedded_here: fn(&DataRequest) -> anyhow::Result<()>,
    /// The block (one row) and the cache of its throwaway server or file.
    pub defaults: fn(&DataRequest) -> EngineDefaults,
    /// `--db` as the options and the Recording show it: without a password.
    pub shown_db: fn(&str) -> anyhow::Result<String>,
    /// The engine configured, after every check that needs no work.
    pub configure: fn(&DataRequest, EngineRequest) -> anyhow::Result<Box<dyn DatabaseEngine>>,
    /// Its server as `strata observe --db URL` follows it; `None`: it has
    /// no server to observe.
    pub observe: Option<fn(&str) -> anyhow::Result<ObservedServer>>,
}

/// The database servers `strata observe` follows.
#[derive(Default)]
pub struct ObservedServers {
    pub collectors: Vec<Box<dyn Collector>>,
    /// Their processes on this machine.
    pub local_pids: Vec<u32>,
    /// Each under its key among the observation's options.
    pub recorded: RecordedServers,
}

/// Database servers observed, each under its engine's key.
pub type RecordedServers = serde_json::Map<String, serde_json::Value>;

/// A database server `strata observe` follows beside the OS's layers.
pub struct ObservedServer {
    pub collector: Box<dyn Collector>,
    /// Its processes on this machine, followed as `--pid` follows one.
    pub local_pids: Vec<u32>,
    /// Its key among the observation's options and what the Recording
    /// says there (the URL without its password, or that it was observed).
    pub recorded_as: (&'static str, serde_json::Value),
}

/// The engines strata runs, in the order the embedded default prefers them.
#[derive(Clone, Copy)]
pub struct Registry(pub &'static [EngineEntry]);

impl Registry {
    /// `kind`'s entry.
    pub fn entry(&self, kind: EngineKind) -> anyhow::Result<&'static EngineEntry> {
        let Registry(entries) = *self;
        entries
            .iter()
            .find(|entry| entry.kind == kind)
            .ok_or_else(|| anyhow::anyhow!("--engine {}: not built into this strata", kind.name()))
    }

    /// The engine `--engine name` chooses.
    pub fn named(&self, name: &str) -> anyhow::Result<EngineKind> {
        let Registry(entries) = *self;
        let chosen = entries.iter().find(|entry| entry.kind.is_named(name));
        match chosen {
            Some(entry) => Ok(entry.kind),
            None => anyhow::bail!(
                "--engine {name}: not an engine; accepted values: {}",
                self.names().join(", ")
            ),
        }
    }

    /// Every engine's `--engine` value, in the registry's order.
    pub fn names(&self) -> Vec<&'static str> {
        let Registry(entries) = *self;
        entries.iter().map(|entry| entry.kind.name()).collect()
    }

    /// Refuses `option` (as the user gave it) where `kind` lacks
    /// `capability`, naming the engines that have it.
    pub fn refuse_without(
        &self,
        kind: EngineKind,
        capability: Capability,
        option: &str,
    ) -> anyhow::Result<()> {
        if kind.can(capability) {
            return Ok(());
        }
        let Registry(entries) = *self;
        let having: Vec<&str> = entries
            .iter()
            .filter(|entry| entry.kind.can(capability))
            .map(|entry| entry.kind.label())
            .collect();
        anyhow::bail!(
            "{option} does not apply to --engine {} ({} only, so far)",
            kind.name(),
            having.join(" and ")
        )
    }

    /// Refuses the first option given that needs a capability `kind`
    /// lacks (`options`: each as the user writes it, whether it was given,
    /// and what it needs).
    pub fn refuse_given_without(
        &self,
        kind: EngineKind,
        options: &[(&str, bool, Capability)],
    ) -> anyhow::Result<()> {
        let given = options.iter().filter(|(_, given, _)| *given);
        for &(option, _, capability) in given {
            self.refuse_without(kind, capability, option)?;
        }
        Ok(())
    }

    /// Refuses another engine's own option given for `kind`.
    pub fn refuse_other_engines_options(
        &self,
        kind: EngineKind,
        given: &EngineOptionMatches,
    ) -> anyhow::Result<()> {
        let Registry(entries) = *self;
        let others: Vec<(&EngineOptions, &str)> = entries
            .iter()
            .filter(|entry| entry.kind != kind)
            .map(|entry| (&entry.kind.0.options, entry.kind.label()))
            .collect();
        engine_options::refuse_others((&kind.0.options, kind.name()), &others, given)
    }

    /// The servers `strata observe` follows (each URL with the option that
    /// gave it), each by the engine whose URL it is, else the first; a
    /// second server of one engine is refused, as is an engine with no
    /// server.
    pub fn observe(&self, servers: &[(&str, &str)]) -> anyhow::Result<ObservedServers> {
        let Registry(entries) = *self;
        let first = entries.first().context("no database engine is built in")?;
        let mut chosen: Vec<(EngineKind, &str)> = Vec::new();
        for &(option, url) in servers {
            let claimed = entries.iter().find(|entry| (entry.claims_db)(url));
            let kind = claimed.unwrap_or(first).kind;
            if let Some((_, before)) = chosen.iter().find(|(chosen, _)| *chosen == kind) {
                bail!(
                    "{before} and {option} each name a {} server: strata observe follows one \
                     of each engine, give one",
                    kind.label()
                );
            }
            chosen.push((kind, option));
        }
        let mut observed = ObservedServers::default();
        for ((kind, option), (_, url)) in chosen.into_iter().zip(servers) {
            let Some(observe) = self.entry(kind)?.observe else {
                bail!(
                    "{option}: {} has no server for strata observe to follow",
                    kind.label()
                );
            };
            let server = observe(url).with_context(|| format!("{option} ({})", kind.label()))?;
            let (key, value) = server.recorded_as;
            observed.recorded.insert(key.to_string(), value);
            observed.local_pids.extend(server.local_pids);
            observed.collectors.push(server.collector);
        }
        Ok(observed)
    }

    /// `command` (`run`'s or `setup`'s) with every engine's own options.
    pub fn with_engine_options(&self, command: clap::Command) -> clap::Command {
        let Registry(entries) = *self;
        entries.iter().fold(command, |command, entry| {
            (entry.kind.0.options.augment)(command)
        })
    }

    /// `--db` as `kind` shows it, or as the engine whose URL it is shows
    /// it (another engine's password must not appear either).
    pub fn shown_db(&self, kind: EngineKind, db: &str) -> anyhow::Result<String> {
        let Registry(entries) = *self;
        let claimed = entries.iter().find(|entry| (entry.claims_db)(db));
        let entry = claimed.filter(|entry| entry.kind != kind);
        (entry.unwrap_or(self.entry(kind)?).shown_db)(db)
    }

    /// The engine asked for; else the one whose URL `--db` is, else the
    /// first's; with neither, the first that can run the embedded default
    /// here (said when it is not the first).
    pub fn choose(&self, data: &DataRequest) -> anyhow::Result<EngineKind> {
        let Registry(entries) = *self;
        let first = entries.first().context("no database engine is built in")?;
        if let Some(name) = &data.engine {
            return self.named(name);
        }
        if let Some(db) = &data.db {
            let claimed = entries.iter().find(|entry| (entry.claims_db)(db));
            return Ok(claimed.unwrap_or(first).kind);
        }
        let mut refused = Vec::new();
        for entry in entries {
            match (entry.embedded_here)(data) {
                Ok(()) if refused.is_empty() => return Ok(entry.kind),
                Ok(()) => {
                    strata_core::note::note(&format!(
                        "strata: {}: running the embedded default on {} instead (--engine {})",
                        refused.join("; "),
                        entry.kind.label(),
                        entry.kind.name()
                    ));
                    return Ok(entry.kind);
                }
                Err(error) => refused.push(format!("{error:#}")),
            }
        }
        anyhow::bail!(
            "no engine can run the embedded default here: {}",
            refused.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::EngineTraits;

    /// An engine with `capabilities`, known by `name` and `label` only.
    macro_rules! engine {
        ($name:literal, $label:literal, $capabilities:expr) => {
            EngineEntry {
                kind: EngineKind(&EngineTraits {
                    recorded: &strata_recording::environment::RecordedEngine {
                        name: $name,
                        label: $label,
                        cache: None,
                    },
                    aliases: &[],
                    has_server: true,
                    capabilities: $capabilities,
                    log_directory: "",
                    without_counters: "",
                    blocks_read: "",
                    options: EngineOptions::NONE,
                }),
                claims_db: |_| false,
                embedded_here: |_| Ok(()),
                defaults: |_| unreachable!(),
                shown_db: |db| Ok(db.to_string()),
                configure: |_, _| anyhow::bail!("not built in tests"),
                observe: None,
            }
        };
    }

    const REGISTRY: Registry = Registry(&[
        engine!("first", "First", &[Capability::Sweep, Capability::Shards]),
        engine!("second", "Second", &[]),
        engine!("third", "Third", &[Capability::Sweep]),
    ]);

    #[test]
    fn an_option_an_engine_cannot_take_is_refused_naming_those_that_can() {
        let error = |name: &str, capability, option| {
            let kind = REGISTRY.named(name).unwrap();
            let refused = REGISTRY.refuse_without(kind, capability, option);
            format!("{:#}", refused.unwrap_err())
        };
        assert_eq!(
            error("second", Capability::Sweep, "--sweep-sessions"),
            "--sweep-sessions does not apply to --engine second (First and Third only, so far)"
        );
        assert_eq!(
            error("third", Capability::Shards, "--shard 1/2"),
            "--shard 1/2 does not apply to --engine third (First only, so far)"
        );
        let first = REGISTRY.named("first").unwrap();
        assert!(REGISTRY
            .refuse_without(first, Capability::Shards, "--shard 1/2")
            .is_ok());
    }

    #[test]
    fn observe_refuses_two_servers_of_one_engine_and_an_engine_without_one() {
        let refused = |servers: &[(&str, &str)]| match REGISTRY.observe(servers) {
            Ok(_) => panic!("{servers:?} accepted"),
            Err(error) => format!("{error:#}"),
        };
        assert_eq!(
            refused(&[("--db", "one"), ("--mariadb", "two")]),
            "--db and --mariadb each name a First server: strata observe follows one of each \
             engine, give one"
        );
        assert_eq!(
            refused(&[("--db", "one")]),
            "--db: First has no server for strata observe to follow"
        );
        assert!(REGISTRY.observe(&[]).is_ok());
    }

    #[test]
    fn an_engine_not_in_the_registry_is_refused_naming_those_that_are() {
        let refused = format!("{:#}", REGISTRY.named("oracle").unwrap_err());
        assert_eq!(
            refused,
            "--engine oracle: not an engine; accepted values: first, second, third"
        );
    }
}
