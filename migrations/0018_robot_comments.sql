-- 0018 robot comments (issue 28): Gerrit's analyzer findings (GET /changes/{id}/robotcomments,
-- RobotCommentInfo) are never a human reviewer's comment.
-- * review_comments.robot_id: the analyzer that wrote the comment (RobotCommentInfo.robot_id,
--   or a sphragis examples file's comments[].robot_id); null for a person's comment and for
--   comments loaded before 0018.
-- * refine_comments.robot_comment: the comment is a robot's (robot_id not null); null on
--   versions refined before 0018. A robot comment is not a service-account comment, its
--   structured fix is never a reviewer's suggested edit, and the robot_comment rule drops it.
-- * refine_examples.robot_comments: how many of the example's comments are robots' (null on
--   versions refined before 0018).
alter table review_comments add column robot_id varchar;
alter table refine_comments add column robot_comment boolean;
alter table refine_examples add column robot_comments integer;
