//! An engine's own options (PostgreSQL's `--shared-buffers`, MariaDB's
//! `--performance-schema`): declared by the engine's crate as a
//! `clap::Args` type, added to `run`'s and `setup`'s options from the
//! registry, read back by that engine alone, and written into the
//! Recording's options as the type serializes them. Given for another
//! engine, such an option is refused before any work, naming whose it is.
//!
//! Not for: the options every engine takes (`options`), or capabilities
//! an option needs (`registry::Registry::refuse_without`).

use anyhow::bail;
use clap::parser::ValueSource;
use serde::Serialize;
use serde_json::{Map, Value};
use strata_recording::environment::OPTIONS_OF_EVERY_RUN;

/// How an engine's own options reach the command line and the Recording.
#[derive(Debug)]
pub struct EngineOptions {
    /// Adds them to a command (`<T as clap::Args>::augment_args`).
    pub augment: fn(clap::Command) -> clap::Command,
    /// The options as the Recording's options show them.
    pub recorded: fn(&EngineOptionMatches) -> anyhow::Result<Map<String, Value>>,
}

impl EngineOptions {
    /// An engine with no options of its own.
    pub const NONE: EngineOptions = EngineOptions {
        augment: |command| command,
        recorded: |_| Ok(Map::new()),
    };

    /// The options of type `T`: its fields as clap declares them, and as
    /// serde writes them into the Recording (skip what is not recorded).
    pub const fn of<T>() -> EngineOptions
    where
        T: clap::Args + clap::FromArgMatches + Default + Serialize,
    {
        EngineOptions {
            augment: <T as clap::Args>::augment_args,
            recorded: recorded::<T>,
        }
    }

    /// Their arguments, as clap declares them.
    fn arguments(&self) -> Vec<clap::Arg> {
        let command = (self.augment)(clap::Command::new("engine"));
        command.get_arguments().cloned().collect()
    }
}

fn recorded<T>(matches: &EngineOptionMatches) -> anyhow::Result<Map<String, Value>>
where
    T: clap::FromArgMatches + Default + Serialize,
{
    match serde_json::to_value(matches.get::<T>()?)? {
        Value::Object(object) => Ok(object),
        other => bail!("an engine's options are recorded as an object, not as {other}"),
    }
}

/// The parsed command line of `run` or `setup`, from which each engine
/// reads its own options; none when the request was made in code (every
/// option at its default).
#[derive(Clone, Debug, Default)]
pub struct EngineOptionMatches(Option<clap::ArgMatches>);

impl EngineOptionMatches {
    /// `run`'s or `setup`'s matches, with every engine's options declared.
    pub fn of(matches: &clap::ArgMatches) -> EngineOptionMatches {
        EngineOptionMatches(Some(matches.clone()))
    }

    /// One engine's options as given, their defaults where not.
    pub fn get<T: clap::FromArgMatches + Default>(&self) -> anyhow::Result<T> {
        match &self.0 {
            None => Ok(T::default()),
            Some(matches) => T::from_arg_matches(matches)
                .map_err(|error| anyhow::anyhow!("reading an engine's options: {}", error.kind())),
        }
    }

    /// Whether the user gave `argument` on the command line.
    fn given(&self, argument: &clap::Arg) -> bool {
        let Some(matches) = &self.0 else {
            return false;
        };
        let id = argument.get_id().as_str();
        matches.ids().any(|given| given.as_str() == id)
            && matches.value_source(id) == Some(ValueSource::CommandLine)
    }
}

/// The options every engine's run records, with `engine`'s own
/// (`engine_options`) among them and the keys every Recording of this
/// format has set to null where the engine has no such option.
pub fn recorded_options(
    engine_options: &EngineOptions,
    matches: &EngineOptionMatches,
) -> anyhow::Result<Map<String, Value>> {
    let mut recorded = (engine_options.recorded)(matches)?;
    for key in OPTIONS_OF_EVERY_RUN {
        recorded.entry(key).or_insert(Value::Null);
    }
    Ok(recorded)
}

/// Refuses an option of another engine (`others`, each with its label)
/// given for `chosen` (`--engine name`), naming whose option it is.
pub fn refuse_others(
    (chosen, name): (&EngineOptions, &str),
    others: &[(&EngineOptions, &str)],
    matches: &EngineOptionMatches,
) -> anyhow::Result<()> {
    let own: Vec<clap::Id> = chosen
        .arguments()
        .iter()
        .map(|argument| argument.get_id().clone())
        .collect();
    for (options, label) in others {
        let foreign = options
            .arguments()
            .into_iter()
            .filter(|argument| !own.contains(argument.get_id()))
            .find(|argument| matches.given(argument));
        if let Some(argument) = foreign {
            bail!(
                "--{} does not apply to --engine {name} (it is {label}'s)",
                argument.get_long().unwrap_or(argument.get_id().as_str())
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Args;

    #[derive(Args, Debug, Default, Serialize, PartialEq)]
    struct FirstOptions {
        /// A size
        #[arg(long)]
        #[serde(rename = "size_bytes")]
        size: Option<u64>,
        /// A switch
        #[arg(long)]
        #[serde(skip)]
        keep: bool,
    }

    #[derive(Args, Debug, Default, Serialize)]
    struct SecondOptions {
        /// A switch of its own
        #[arg(long)]
        counters: bool,
    }

    const FIRST: EngineOptions = EngineOptions::of::<FirstOptions>();
    const SECOND: EngineOptions = EngineOptions::of::<SecondOptions>();

    fn parsed(args: &[&str]) -> EngineOptionMatches {
        let command = (SECOND.augment)((FIRST.augment)(clap::Command::new("run")));
        let matches = command.try_get_matches_from(args).unwrap();
        EngineOptionMatches::of(&matches)
    }

    #[test]
    fn each_engine_reads_its_own_options_and_records_them_as_serialized() {
        let matches = parsed(&["run", "--size", "4096", "--keep"]);
        let first: FirstOptions = matches.get().unwrap();
        assert_eq!(
            first,
            FirstOptions {
                size: Some(4096),
                keep: true
            }
        );
        let recorded = recorded_options(&FIRST, &matches).unwrap();
        assert_eq!(recorded["size_bytes"], 4096);
        assert!(!recorded.contains_key("keep"), "{recorded:?}");
        for key in OPTIONS_OF_EVERY_RUN {
            assert!(recorded.contains_key(key), "{key}: {recorded:?}");
        }
        let unparsed = EngineOptionMatches::default();
        assert_eq!(
            unparsed.get::<FirstOptions>().unwrap(),
            FirstOptions::default()
        );
    }

    #[test]
    fn another_engines_option_is_refused_naming_whose_it_is() {
        let matches = parsed(&["run", "--keep"]);
        let refused = refuse_others((&SECOND, "second"), &[(&FIRST, "First")], &matches);
        assert_eq!(
            format!("{:#}", refused.unwrap_err()),
            "--keep does not apply to --engine second (it is First's)"
        );
        assert!(refuse_others((&FIRST, "first"), &[(&SECOND, "Second")], &matches).is_ok());
        let defaults_only = parsed(&["run"]);
        assert!(refuse_others((&SECOND, "second"), &[(&FIRST, "First")], &defaults_only).is_ok());
    }
}
