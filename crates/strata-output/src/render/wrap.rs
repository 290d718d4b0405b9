//! Word wrapping for the text renderer, counting characters (not bytes) so
//! that `—`, `µ` and sparkline blocks take one column each.
//!
//! Not for: terminal cell widths of wide (CJK) characters or hyphenation.

/// Number of columns `text` takes: its characters.
pub fn columns(text: &str) -> usize {
    text.chars().count()
}

/// `text` split into lines of at most `width` characters, breaking between
/// words; a word longer than `width` is cut. Always at least one line.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        for piece in split_long_word(word, width) {
            let needed = columns(&line) + usize::from(!line.is_empty()) + columns(&piece);
            if !line.is_empty() && needed > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&piece);
        }
    }
    lines.push(line);
    lines
}

/// `text` wrapped to `width`, its first line starting with `first` and the
/// others with `rest` (a hanging indent). Both prefixes count toward `width`.
pub fn wrap_with_prefix(text: &str, first: &str, rest: &str, width: usize) -> Vec<String> {
    let prefix_columns = columns(first).max(columns(rest));
    let body_width = width.saturating_sub(prefix_columns).max(1);
    wrap(text, body_width)
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            let prefix = if index == 0 { first } else { rest };
            format!("{prefix}{line}").trim_end().to_string()
        })
        .collect()
}

fn split_long_word(word: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    chars
        .chunks(width)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_between_words_within_width() {
        let lines = wrap("the quick brown fox jumps over the lazy dog", 10);
        assert_eq!(
            lines,
            ["the quick", "brown fox", "jumps over", "the lazy", "dog"]
        );
    }

    #[test]
    fn cuts_words_longer_than_the_width() {
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
    }

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(wrap("µs µs µs", 5), ["µs µs", "µs"]);
    }

    #[test]
    fn hanging_indent_counts_toward_width() {
        let lines = wrap_with_prefix("one two three four", "- ", "  ", 9);
        assert_eq!(lines, ["- one two", "  three", "  four"]);
    }
}
