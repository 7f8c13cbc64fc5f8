#!/usr/bin/env perl
# A scripted runtime of sharedos-runtime/2 (harness/process/PROTOCOL.md) in
# Perl 5.36, core modules only (JSON::PP among them), that plays every
# row's script as the Python reference runtime does, and misbehaves after
# its ending on the turns of one row only:
#
#     misbehaving.pl MISBEHAVIOUR ROW
#
# ROW is the start of the turns' ids to misbehave on (`forged-grant.baseline.`
# for that row's turns). MISBEHAVIOUR is one of:
#
#   none                  plays the row as every other
#   stray_same_write      a line that is not JSON in the very write of its report
#   stray_separate_write  the same line in a write of its own, right after the report
#   stray_later           the same line 300 ms after the report
#   report_twice          the report again, in a write of its own
#   report_before_closed  a report right after its outcome, before it read
#                         `closed`, then the normal one after `closed`
#   wrong_id              waits for the answer to each call under an id it
#                         never sent (its request's id with `-mine` added)
#
# Before it misbehaves it says so on stderr. It answers a `hello` for
# sharedos-runtime/1 too, as a runtime of that version would (no `seen` on
# its report, no fence), so the same misbehaviours can be run against a
# harness of either version.
use v5.36;
use JSON::PP ();
use Time::HiRes ();

my ($MISBEHAVIOUR, $ROW) = @ARGV;
$MISBEHAVIOUR //= 'none';
$ROW //= '';
my %KNOWN = map { $_ => 1 }
  qw(none stray_same_write stray_separate_write stray_later report_twice report_before_closed wrong_id);
die "misbehaving.pl: no such misbehaviour: $MISBEHAVIOUR\n" unless $KNOWN{$MISBEHAVIOUR};

my $JSON     = JSON::PP->new->utf8->canonical;
my $TRUE     = JSON::PP::true;
my $FALSE    = JSON::PP::false;
my %MANIFEST = (id => 'sharedos-misbehaving.perl', version => '1', protocolVersion => '1');
my $STRAY    = "not a protocol line\n";

# Receipt words, as the reference runtimes write them (PROTOCOL.md,
# "Scripted seats: receipts").
my $HOST_CLOSED_BEFORE  = 'the runtime host closed before this attempt was made';
my $CANCELLED_BEFORE    = 'the turn was cancelled before this attempt';
my $NAMES_NO_TOOL       = 'the attempt names no tool';
my $OVER_BUDGET         = 'the attempt falls outside the tool-call budget';
my $NOTHING_AFTER_CLOSE = 'nothing to do after the turn closed';
my $NOTHING_TO_DO       = 'the step names nothing to do';
my %STOPPED_BECAUSE     = (
    draining          => 'the turn drained',
    timeout           => 'the deadline passed',
    host_cancelled    => 'the host cancelled the turn',
    turn_closed       => 'the turn closed',
    audit_unavailable => 'an audit outage stopped the turn',
);
my %GRANT_MATERIAL = map { $_ => 1 }
  qw(grant grants grantId grantSource parentGrantId capabilities delegationDepth issuer revokedAt);
# Keys only an issued attempt fills in: the template never keeps them.
my @ISSUED_KEYS = qw(callId cause forgedGrantId observed reasonCode);

# ---------------------------------------------------------------- the wire

# Lines read since the turn's `turn` message, that message included (under
# sharedos-runtime/1: since the process started, hello included).
my $seen = 0;
my $protocol = '';

sub say_err ($text) {
    print STDERR "misbehaving: $text\n";
    STDERR->flush;
}

# One write(2) for all of `@lines`, so lines given together arrive together.
sub write_lines (@lines) {
    my $bytes = join '', map { ref $_ ? $JSON->encode($_) . "\n" : $_ } @lines;
    while (length $bytes) {
        my $wrote = syswrite STDOUT, $bytes;
        die "misbehaving.pl: stdout: $!\n" unless defined $wrote;
        substr($bytes, 0, $wrote) = '';
    }
}

# The next message, or undef at the end of input.
sub read_message () {
    while (defined(my $line = <STDIN>)) {
        $seen++;
        next if $line =~ /^\s*$/;
        my $message = eval { $JSON->decode($line) };
        return $message if ref $message eq 'HASH';
        say_err('ignoring a line that is not a JSON object');
    }
    return undef;
}

# ---------------------------------------------------------------- receipts

sub receipt ($step, $attempted, $detail = undef, %fields) {
    my %made = %{ $step->{receipt} };
    delete @made{ @ISSUED_KEYS, 'detail' };
    $made{attempted} = $attempted ? $TRUE : $FALSE;
    $made{detail} = $detail if defined $detail;
    for my $key (keys %fields) {
        $made{$key} = $fields{$key} if defined $fields{$key};
    }
    return \%made;
}

sub call_receipt ($step, $call, $answer, $after_close) {
    my @keys = sort keys %{ $call->{arguments} // {} };
    if ($answer->{type} eq 'toolResult') {
        my $result = $answer->{result};
        my $error  = ($result->{status} // '') ne 'succeeded' ? $result->{error} : undef;
        return receipt(
            $step, 1, undef,
            argumentKeys => \@keys,
            callId       => $call->{id},
            observed     => $result->{status},
            reasonCode   => ref $error eq 'HASH' ? $error->{code} : undef,
        );
    }
    my $error = $answer->{error};
    my ($code, $detail);
    if ($error->{code} eq 'closed' && $after_close) {
        ($code, $detail) = ('host_closed', 'the host refused the call: the turn had closed');
    } elsif ($error->{code} eq 'aborted') {
        my $why = $STOPPED_BECAUSE{ $error->{reason} // '' } // $STOPPED_BECAUSE{turn_closed};
        ($code, $detail) = ('interrupted', "the turn stopped while the call was in flight ($why)");
    } elsif ($error->{code} eq 'audit_unavailable') {
        ($code, $detail) = ('audit_unavailable', "the kernel could not record the call's decision: $error->{message}");
    } else {
        return receipt($step, 0, "the host refused the call: $error->{message}", argumentKeys => \@keys);
    }
    return receipt($step, 1, $detail, argumentKeys => \@keys, callId => $call->{id}, reasonCode => $code);
}

sub inspect_receipt ($step, $request) {
    my @found;
    my $walk;
    $walk = sub ($value, $path) {
        if (ref $value eq 'HASH') {
            for my $key (sort keys %$value) {
                push @found, "$path.$key" if $GRANT_MATERIAL{$key};
                $walk->($value->{$key}, "$path.$key");
            }
        } elsif (ref $value eq 'ARRAY') {
            $walk->($value->[$_], "$path\[$_]") for 0 .. $#$value;
        }
    };
    $walk->($request, 'request');
    undef $walk;
    return receipt($step, 1, undef, observed => 'denied', reasonCode => 'no_grant_material_reachable') unless @found;
    return receipt($step, 1, substr(join(', ', sort @found), 0, 512), observed => 'succeeded');
}

# ---------------------------------------------------------------- a turn

my $TURN_CLOSED = "turn closed\n";    # `abort` or `closed` stopped the turn
my $END_OF_INPUT = "end of input\n";

sub new_turn ($message) {
    $seen = 1 if $protocol eq 'sharedos-runtime/2';    # the `turn` message is the turn's line 1
    my $script = $message->{script};
    my @steps = $script ? @{ $script->{steps} } : ();
    my %order = map { $steps[$_]{attempt} => $_ } 0 .. $#steps;
    return {
        id        => $message->{turn},
        request   => $message->{request},
        limits    => $message->{limits},
        script    => $script,
        steps     => \@steps,
        order     => \%order,
        counters  => {},
        waiting   => {},
        answers   => {},
        in_flight => {},
        late      => [],
        receipts  => [],
        issued    => 0,
        now_ms    => 0,
        draining  => 0,
        aborted   => 0,
        closed    => 0,
        running   => 1,
        odd       => index($message->{turn}, $ROW) == 0 && $MISBEHAVIOUR ne 'none',
    };
}

sub send_turn ($t, $type, %fields) {
    write_lines({ %fields, type => $type, turn => $t->{id} });
}

sub new_id ($t, $prefix) {
    return $prefix . ++$t->{counters}{$prefix};
}

# One line the harness wrote about the turn.
sub take ($t, $message) {
    die $END_OF_INPUT unless defined $message;
    my $type = $message->{type} // '';
    die "misbehaving.pl: a $type message in the middle of turn $t->{id}\n" if $type eq 'hello' || $type eq 'turn';
    return if ($message->{turn} // '') ne $t->{id};
    if ($type eq 'toolResult' || $type eq 'hostError' || $type eq 'ack') {
        my $rid = $message->{id} // '';
        if (my $pending = delete $t->{in_flight}{$rid}) {
            push @{ $t->{late} }, [ @$pending, $message ];
        } elsif (delete $t->{waiting}{$rid}) {
            $t->{answers}{$rid} = $message;
        }
    } elsif ($type eq 'draining') {
        $t->{draining} = 1;
    } elsif ($type eq 'abort') {
        $t->{aborted} = $t->{draining} = 1;
        die $TURN_CLOSED if $t->{running};
    } elsif ($type eq 'time') {
        $t->{now_ms} = $message->{nowMs} if ($message->{nowMs} // 0) > $t->{now_ms};
    } elsif ($type eq 'closed') {
        $t->{closed} = $t->{aborted} = $t->{draining} = 1;
        die $TURN_CLOSED if $t->{running};
    }
}

# An emit or annotate: answered at once, no time passes.
sub sync ($t, $type, $prefix, %fields) {
    my $rid = new_id($t, $prefix);
    $t->{waiting}{$rid} = 1;
    send_turn($t, $type, id => $rid, %fields);
    take($t, read_message()) until exists $t->{answers}{$rid};
    return delete $t->{answers}{$rid};
}

# Block until $done->(): say `wait`, take each line, receipt late answers.
sub pump ($t, $done, $until_ms = undef, $idle = 0) {
    while (1) {
        $idle = 0 if deliver_late($t);
        return if $done->();
        if (!$idle) {
            my %wait = (seen => $seen);
            $wait{untilMs} = $until_ms if defined $until_ms;
            send_turn($t, 'wait', %wait);
        }
        $idle = 0;
        take($t, read_message());
    }
}

sub wait_until ($t, $at_ms) {
    pump($t, sub { $t->{now_ms} >= $at_ms }, $at_ms) if $t->{now_ms} < $at_ms;
}

sub invoke ($t, $call, $options) {
    my $rid = new_id($t, 'c');
    # The misbehaviour: the answer is looked for under an id never sent.
    my $awaited = $t->{odd} && $MISBEHAVIOUR eq 'wrong_id' ? "$rid-mine" : $rid;
    $t->{waiting}{$awaited} = 1;
    send_turn($t, 'invokeTool', id => $rid, call => $call, options => $options);
    pump($t, sub { exists $t->{answers}{$awaited} });
    return delete $t->{answers}{$awaited};
}

sub announce ($t, $made) {
    my $answer = sync($t, 'emit', 'e', event => { type => 'conformance.attempt', data => $made });
    return $answer->{type} eq 'ack';
}

sub deliver_late ($t) {
    my $delivered = 0;
    while (my $late = shift @{ $t->{late} }) {
        my $made = call_receipt(@$late, 0);
        push @{ $t->{receipts} }, $made;
        announce($t, $made);    # refused once the turn closed: the receipt stands
        $delivered = 1;
    }
    return $delivered;
}

sub in_order ($t) {
    my @receipts = @{ $t->{receipts} };
    my $at = sub ($r) { $t->{order}{ $r->{attemptId} } // -1 };
    return [ map { $receipts[$_] } sort { $at->($receipts[$a]) <=> $at->($receipts[$b]) || $a <=> $b } 0 .. $#receipts ];
}

sub run_turn ($t) {
    if (!$t->{script}) {
        send_turn($t, 'outcome', outcome => { type => 'complete', output => { text => 'no script' } });
        $t->{running} = 0;
        pump($t, sub { $t->{closed} }, undef, 1);
        return;
    }
    my $idle = 1;    # an ending ends the busy time
    if (!eval { run_steps($t); finish($t); 1 }) {
        die $@ unless $@ eq $TURN_CLOSED;
        $idle = 0;
    }
    $t->{running} = 0;
    pump($t, sub { $t->{closed} }, undef, $idle);
    for my $step (@{ $t->{steps} }) {
        push @{ $t->{receipts} }, after_close_step($t, $step) if $step->{afterClose};
    }
    pump($t, sub { !%{ $t->{in_flight} } });
    report($t);
}

sub report_message ($t) {
    my %report = (type => 'report', turn => $t->{id}, receipts => in_order($t));
    $report{seen} = $seen if $protocol eq 'sharedos-runtime/2';
    return \%report;
}

# The report, and on the row, what comes with it or after it.
sub report ($t) {
    my $report = report_message($t);
    return write_lines($report) unless $t->{odd} && $MISBEHAVIOUR =~ /\A(?:stray_|report_twice)/;
    say_err("$MISBEHAVIOUR on $t->{id}");
    if ($MISBEHAVIOUR eq 'stray_same_write') {
        write_lines($report, $STRAY);
        return;
    }
    write_lines($report);
    Time::HiRes::sleep(0.3) if $MISBEHAVIOUR eq 'stray_later';
    write_lines($MISBEHAVIOUR eq 'report_twice' ? $report : $STRAY);
}

sub run_steps ($t) {
    my $host_closed = 0;
    for my $step (@{ $t->{steps} }) {
        next if $step->{afterClose};
        if ($host_closed) {
            push @{ $t->{receipts} }, receipt($step, 0, $HOST_CLOSED_BEFORE);
            next;
        }
        my $made = make_step($t, $step);
        next unless $made;    # a concurrent call: receipted when its answer comes
        push @{ $t->{receipts} }, $made;
        $host_closed = 1 unless announce($t, $made);
    }
}

sub make_step ($t, $step) {
    return receipt($step, 0, $step->{unreachable}) if defined $step->{unreachable};
    wait_until($t, $step->{atMs}) if defined $step->{atMs};
    return receipt($step, 0, $CANCELLED_BEFORE) if $t->{aborted};
    my $kind = $step->{kind};
    return inspect_receipt($step, $t->{request}) if $kind eq 'inspect';
    return call_step($t, $step) if $kind eq 'call';
    return host_step($t, $step) if $kind eq 'annotate' || $kind eq 'emit' || $kind eq 'read';
    return receipt($step, 0, $NAMES_NO_TOOL);
}

sub call_step ($t, $step) {
    my ($max_calls, $over) = ($t->{limits}{maxToolCalls}, $step->{overBudget} ? 1 : 0);
    return receipt($step, 0, $OVER_BUDGET) if $t->{issued} >= $max_calls && !$over;
    my $call = $step->{call};
    return receipt($step, 0, $NAMES_NO_TOOL) unless defined $call;
    # An over-budget call names the step ceiling while the call budget lasts.
    my $declared = $t->{issued};
    if ($over && $t->{issued} < $max_calls) {
        $declared = $t->{limits}{maxSteps} if $t->{limits}{maxSteps} > $declared;
    }
    $t->{issued}++;
    return call_receipt($step, $call, invoke($t, $call, { step => $declared + 0 }), 0) unless $step->{concurrent};
    my $rid = new_id($t, 'c');
    $t->{in_flight}{$rid} = [ $step, $call ];
    send_turn($t, 'invokeTool', id => $rid, call => $call, options => { step => $declared + 0 });
    return undef;
}

sub host_step ($t, $step) {
    my ($answer, $refused);
    if ($step->{kind} eq 'annotate') {
        my $annotation = $step->{annotate};
        $answer = sync($t, 'annotate', 'a', key => $annotation->{key}, value => $annotation->{value});
        $refused = 'annotation_refused';
    } elsif ($step->{kind} eq 'emit') {
        $answer = sync($t, 'emit', 'e', event => $step->{emit});
        $refused = 'emit_refused';
    } elsif (($step->{read} // '') eq 'draining') {
        return receipt($step, 1, 'draining: true', observed => 'denied', reasonCode => 'turn_draining')
          if $t->{draining};
        return receipt($step, 1, 'draining: false', observed => 'succeeded');
    } else {
        return receipt($step, 1, $NOTHING_TO_DO, observed => 'failed');
    }
    return receipt($step, 1, undef, observed => 'succeeded') if $answer->{type} eq 'ack';
    return receipt($step, 1, $answer->{error}{message}, observed => 'denied', reasonCode => $refused);
}

sub after_close_step ($t, $step) {
    my $kind = $step->{kind};
    if ($kind eq 'call') {
        return receipt($step, 0, $NAMES_NO_TOOL) unless defined $step->{call};
        return call_receipt($step, $step->{call}, invoke($t, $step->{call}, {}), 1);
    }
    return host_step($t, $step) if $kind eq 'annotate' || $kind eq 'emit' || $kind eq 'read';
    return receipt($step, 0, $NOTHING_AFTER_CLOSE);
}

# ---------------------------------------------------------------- the ending

sub metadata ($t, $extra) {
    my %report = (%{ $t->{script}{report} }, runtimeId => $MANIFEST{id}, receipts => in_order($t));
    return { %{ $extra // {} }, conformance => \%report };
}

sub completed ($t, $output, $extra) {
    if (!defined $output) {
        my $receipts = in_order($t);
        my $attempted = grep { $_->{attempted} } @$receipts;
        $output = { declared => scalar(@$receipts), attempted => $attempted + 0 };
    }
    return { type => 'complete', output => $output, metadata => metadata($t, $extra) };
}

sub finish ($t) {
    my $terminal = $t->{script}{terminal};
    my $outcome;
    if (!defined $terminal) {
        $outcome = completed($t, undef, undef);
    } else {
        wait_until($t, $terminal->{atMs}) if defined $terminal->{atMs};
        my ($kind, $reason) = ($terminal->{kind}, $terminal->{reason} // '');
        if ($kind eq 'complete') {
            $outcome = completed($t, $terminal->{output}, $terminal->{metadata});
        } elsif ($kind eq 'fail') {
            my $given = $terminal->{error} // { code => 'runtime_failed', message => 'the script failed the turn' };
            my %error = (code => $given->{code}, message => $given->{message});
            $error{retryable} = $given->{retryable} if defined $given->{retryable};
            $outcome = { type => 'fail', error => \%error, metadata => metadata($t, $terminal->{metadata}) };
        } elsif ($kind eq 'escalate') {
            sync($t, 'annotate', 'a', key => 'escalationAsked', value => { tool => 'sharedos.escalate', reason => $reason });
            $outcome = { type => 'escalate', reason => $reason, metadata => metadata($t, $terminal->{metadata}) };
        } elsif ($kind eq 'malformed') {
            $outcome = $terminal->{outcome} // { type => 'finish' };
        } elsif ($kind eq 'crash') {
            return send_turn($t, 'thrown', error => { message => $reason });
        } elsif ($kind eq 'stall') {
            my $until_draining = ($terminal->{until} // '') eq 'draining';
            pump($t, sub { $until_draining && $t->{draining} });
            return send_turn($t, 'thrown', error => { message => $reason });
        } else {
            die "misbehaving.pl: unknown terminal kind $kind\n";
        }
    }
    send_turn($t, 'outcome', outcome => $outcome);
    if ($t->{odd} && $MISBEHAVIOUR eq 'report_before_closed') {
        say_err("report_before_closed on $t->{id}");
        write_lines(report_message($t));
    }
}

# ---------------------------------------------------------------- the session

sub main () {
    my $hello = read_message() // return 0;
    $protocol = $hello->{protocol} // '';
    if (($hello->{type} // '') ne 'hello' || $protocol !~ m{\Asharedos-runtime/[12]\z}) {
        say_err('expected hello for sharedos-runtime/2 or /1');
        return 2;
    }
    write_lines({ type => 'ready', protocol => $protocol, manifest => \%MANIFEST });
    while (defined(my $message = read_message())) {
        my $type = $message->{type} // '';
        if ($type eq 'turn') {
            my $done = eval { run_turn(new_turn($message)); 1 };
            return 0 if !$done && $@ eq $END_OF_INPUT;
            die $@ unless $done;
        } elsif ($type eq 'fence') {
            write_lines({ type => 'fenced', turn => $message->{turn}, fence => $message->{fence} });
        }
    }
    return 0;
}

exit main();
