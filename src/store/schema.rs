// @generated automatically by Diesel CLI.

diesel::table! {
    api_tokens (digest) {
        digest -> Text,
        principal_kind -> Text,
        user_id -> Text,
        agent_id -> Text,
        grants -> Text,
        label -> Text,
        created_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    attachments (pending_id) {
        pending_id -> Text,
        handle_id -> Text,
    }
}

diesel::table! {
    attempts (id) {
        id -> BigInt,
        pending_id -> Text,
        at -> BigInt,
        principal_kind -> Text,
        user_id -> Text,
        agent_id -> Text,
        channel -> Text,
        outcome -> Text,
        digest -> Text,
    }
}

diesel::table! {
    bundle_questions (id) {
        id -> BigInt,
        pending_id -> Text,
        session_id -> Text,
        turn_id -> Text,
        question_id -> Text,
        question_index -> Nullable<Integer>,
        payload -> Text,
        status -> Nullable<Text>,
        response -> Nullable<Text>,
        created_at -> BigInt,
        expired_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    bundles (pending_id) {
        pending_id -> Text,
        session_id -> Text,
        task_id -> Text,
        turn_id -> Text,
        kind -> Text,
        context -> Text,
        created_at -> BigInt,
        idempotency_key -> Nullable<Text>,
        may_be_active -> Bool,
        agent_disconnected -> Bool,
        response_delivery_pending -> Bool,
        reject_reason -> Text,
        responded_at -> Nullable<BigInt>,
        resolved_by_kind -> Nullable<Text>,
        resolved_by_id -> Nullable<Text>,
        delivery_lease_until -> Nullable<BigInt>,
        task_key -> Nullable<Text>,
        owner_key -> Nullable<Text>,
        expires_at -> Nullable<BigInt>,
        on_expire -> Text,
        default_response -> Nullable<Text>,
        workspace_key -> Nullable<Text>,
        human_only -> Bool,
        quorum_approvals -> Nullable<Integer>,
        quorum_rejections -> Nullable<Integer>,
        quorum_requested_by -> Nullable<Text>,
        voters -> Text,
        reminders -> Nullable<Text>,
        escalate_at -> Nullable<BigInt>,
        stepped_at -> Nullable<BigInt>,
        next_step_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    escalation_grants (pending_id, user_id) {
        pending_id -> Text,
        user_id -> Text,
        visible_from -> BigInt,
    }
}

diesel::table! {
    event_horizon (id) {
        id -> BigInt,
        pruned_txid -> BigInt,
        pruned_seq -> BigInt,
    }
}

diesel::table! {
    events (seq) {
        seq -> BigInt,
        txid -> BigInt,
        event_type -> Text,
        at -> BigInt,
        pending_id -> Text,
        task_id -> Text,
        workspace_id -> Text,
        task_exists -> Bool,
        kind -> Text,
        data -> Text,
        human_only -> Bool,
    }
}

diesel::table! {
    handles (id) {
        id -> Text,
        alive_until -> BigInt,
    }
}

diesel::table! {
    link_keys (id) {
        id -> Text,
        secret -> Text,
        created_at -> BigInt,
        retired_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    link_uses (link_id) {
        link_id -> Text,
        pending_id -> Text,
        used_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    mail_state (id) {
        id -> BigInt,
        cursor -> Text,
        done_at -> Text,
        done -> Text,
        failures -> Integer,
        failing_since -> Nullable<BigInt>,
        next_attempt_at -> Nullable<BigInt>,
        last_error -> Text,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
        ran_at -> BigInt,
        give_up_us -> BigInt,
        sent -> BigInt,
        failed -> BigInt,
    }
}

diesel::table! {
    quorum_eligible (pending_id, position) {
        pending_id -> Text,
        position -> BigInt,
        user_id -> Text,
    }
}

diesel::table! {
    sessions (id) {
        id -> Text,
        task_id -> Text,
        state -> Text,
        is_primary -> Bool,
    }
}

diesel::table! {
    tasks (id) {
        id -> Text,
        workspace_id -> Text,
        title -> Text,
    }
}

diesel::table! {
    turns (seq) {
        seq -> BigInt,
        id -> Text,
        session_id -> Text,
        started_at -> BigInt,
    }
}

diesel::table! {
    users (user_id) {
        user_id -> Text,
        name -> Text,
        email -> Text,
    }
}

diesel::table! {
    votes (id) {
        id -> BigInt,
        pending_id -> Text,
        user_id -> Text,
        at -> BigInt,
        rejected -> Bool,
        answers -> Text,
        reject_reason -> Text,
        digest -> Text,
    }
}

diesel::table! {
    web_sessions (digest) {
        digest -> Text,
        token_digest -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    webhooks (id) {
        id -> Text,
        url -> Text,
        events -> Text,
        workspace_id -> Text,
        secret -> Text,
        previous_secret -> Nullable<Text>,
        previous_until -> Nullable<BigInt>,
        state -> Text,
        cursor -> Text,
        created_at -> BigInt,
        failing_since -> Nullable<BigInt>,
        failures -> Integer,
        last_error -> Text,
        last_attempt_at -> Nullable<BigInt>,
        next_attempt_at -> Nullable<BigInt>,
        skipped_after -> Text,
        skipped_through -> Text,
        lease_owner -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
        delivered -> BigInt,
        failed -> BigInt,
        allow_private -> Bool,
        links -> Bool,
    }
}

diesel::table! {
    workspace_members (workspace_id, user_id) {
        workspace_id -> Text,
        user_id -> Text,
    }
}

diesel::table! {
    workspaces (id) {
        id -> Text,
        owner_id -> Text,
        name -> Text,
    }
}

diesel::joinable!(attachments -> bundles (pending_id));
diesel::joinable!(bundle_questions -> bundles (pending_id));
diesel::joinable!(bundles -> sessions (session_id));
diesel::joinable!(escalation_grants -> bundles (pending_id));
diesel::joinable!(quorum_eligible -> bundles (pending_id));
diesel::joinable!(sessions -> tasks (task_id));
diesel::joinable!(turns -> sessions (session_id));
diesel::joinable!(votes -> bundles (pending_id));
diesel::joinable!(web_sessions -> api_tokens (token_digest));
diesel::joinable!(workspace_members -> workspaces (workspace_id));

diesel::allow_tables_to_appear_in_same_query!(
    api_tokens,
    attachments,
    attempts,
    bundle_questions,
    bundles,
    escalation_grants,
    event_horizon,
    events,
    handles,
    link_keys,
    link_uses,
    mail_state,
    quorum_eligible,
    sessions,
    tasks,
    turns,
    users,
    votes,
    web_sessions,
    webhooks,
    workspace_members,
    workspaces,
);
