//! Masking what may be a password in a connection string that did not
//! parse, so that an error message can echo what the user typed: the part
//! after `user:` in `user:password@host` (whatever the scheme, misspelt or
//! not), and the value of every `password=` (any case, quoted or not).
//!
//! Not for: connection strings that parse: their own redaction knows their
//! grammar (`ConnectionTarget::redacted`, `collectors::mariadb::redact`).

const MASK: &str = "***";

/// `text` with every possible password replaced by `***`, and the
/// passwords found, to scrub from messages that quote them.
pub fn mask_secrets(text: &str) -> (String, Vec<String>) {
    let mut spans = userinfo_password_spans(text);
    spans.extend(keyword_password_spans(text));
    spans.sort_unstable();
    let mut masked = String::with_capacity(text.len());
    let mut secrets = Vec::new();
    let mut copied_to = 0;
    for (start, end) in spans {
        if start < copied_to || start >= end {
            continue;
        }
        masked.push_str(&text[copied_to..start]);
        masked.push_str(MASK);
        secrets.push(text[start..end].to_string());
        copied_to = end;
    }
    masked.push_str(&text[copied_to..]);
    (masked, secrets)
}

/// `message` with every one of `secrets` replaced by `***`.
pub fn scrub(message: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|secret| !secret.is_empty())
        .fold(message.to_string(), |message, secret| {
            message.replace(secret.as_str(), MASK)
        })
}

/// For each `@`: the word before it (back to white space), after the
/// scheme (`://`, `:/` or nothing), is `user:password`; the password's span.
fn userinfo_password_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for (at, _) in text.match_indices('@') {
        let word_start = text[..at]
            .rfind(char::is_whitespace)
            .map_or(0, |space| space + 1);
        let word = &text[word_start..at];
        let userinfo_start = match (word.find("://"), word.find(":/")) {
            (Some(scheme), _) => scheme + 3,
            (None, Some(scheme)) => scheme + 2,
            (None, None) => 0,
        };
        if let Some(colon) = word[userinfo_start..].find(':') {
            spans.push((word_start + userinfo_start + colon + 1, at));
        }
    }
    spans
}

/// The value of every `password=` (any case; `'quoted'` or up to white
/// space, `&` or `;`).
fn keyword_password_spans(text: &str) -> Vec<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    let mut spans = Vec::new();
    for (found, keyword) in lower.match_indices("password") {
        let after = found + keyword.len();
        let rest = &text[after..];
        let Some(equals) = rest.find(|c: char| !c.is_whitespace()) else {
            continue;
        };
        if !rest[equals..].starts_with('=') {
            continue;
        }
        let value_at = after + equals + 1;
        let value = &text[value_at..];
        let skip = value.len() - value.trim_start().len();
        let value_at = value_at + skip;
        let value = &text[value_at..];
        let end = match value.strip_prefix('\'') {
            Some(quoted) => quoted
                .find('\'')
                .map_or(text.len(), |close| value_at + close + 2),
            None => value
                .find(|c: char| c.is_whitespace() || c == '&' || c == ';')
                .map_or(text.len(), |stop| value_at + stop),
        };
        spans.push((value_at, end));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_that_did_not_parse_is_masked() {
        for (text, expected) in [
            ("postgress://u:PW@h/db", "postgress://u:***@h/db"),
            ("postgres:/u:PW@h/db", "postgres:/u:***@h/db"),
            ("host=h PASSWORD=PW", "host=h PASSWORD=***"),
            (
                "host=h password = 'P W' port=x",
                "host=h password = *** port=x",
            ),
            ("mysql://u:PW@h:notaport/db", "mysql://u:***@h:notaport/db"),
            (
                "mysql://u@h/db?password=PW&x=1",
                "mysql://u@h/db?password=***&x=1",
            ),
            ("u:pa/ss@h", "u:***@h"),
            ("host=h user=u", "host=h user=u"),
        ] {
            let (masked, secrets) = mask_secrets(text);
            assert_eq!(masked, expected, "{text}");
            assert!(
                !masked.contains("PW") && !masked.contains("pa/ss"),
                "{masked}"
            );
            let message = format!("unknown option near `{}`", secrets.join(" "));
            assert!(secrets.is_empty() || !scrub(&message, &secrets).contains("PW"));
        }
    }

    #[test]
    fn non_ascii_and_odd_bytes_do_not_panic() {
        for text in [
            "pässword=ü",
            "@@@:::",
            "password",
            "password=",
            "a:é@b",
            "password='open",
        ] {
            let (masked, _) = mask_secrets(text);
            assert!(!masked.is_empty());
        }
    }
}
