//! A connection string or URL that does not parse is echoed with its
//! password masked, for every command and engine that takes one.

mod common;

use common::*;

const PASSWORD: &str = "SECRETPW";

#[test]
fn unparsable_connection_strings_never_show_the_password() {
    let dir = scratch();
    let forms = [
        "postgress://u:SECRETPW@h/db",
        "postgres:/u:SECRETPW@h/db",
        "host=h PASSWORD=SECRETPW",
        "host=h password = 'SECRETPW' port=notaport",
        "mysql://u:SECRETPW@h:notaport/db",
    ];
    let commands: [&[&str]; 6] = [
        &["run", "--db"],
        &["setup", "--db"],
        &["observe", "--count", "1", "--db"],
        &["observe", "--count", "1", "--mariadb"],
        &["run", "--engine", "mariadb", "--db"],
        &["setup", "--engine", "mariadb", "--db"],
    ];
    for form in forms {
        for command in commands {
            let mut args = command.to_vec();
            args.push(form);
            let output = run(&args, dir.path());
            let everything = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                stderr_of(&output)
            );
            assert!(!output.status.success(), "{args:?}: {everything}");
            assert!(!everything.contains(PASSWORD), "{args:?}: {everything}");
            assert!(
                everything.contains("***"),
                "{args:?} masks it: {everything}"
            );
        }
    }
}
