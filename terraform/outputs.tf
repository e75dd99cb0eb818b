output "api_load_balancer_dns" {
  description = "Point the base_url host name (CNAME/alias) at this."
  value       = aws_lb.api.dns_name
}

output "bucket" {
  value = aws_s3_bucket.media.bucket
}

output "database_endpoint" {
  value = aws_db_instance.this.endpoint
}

output "ecs_cluster" {
  value = aws_ecs_cluster.this.name
}

output "secret_parameters" {
  description = "Set these with aws ssm put-parameter before the first deploy."
  value       = [for p in aws_ssm_parameter.secret : p.name]
}

output "migrate_command" {
  description = "Run once before each rollout; wait for exit code 0."
  value = join(" ", [
    "aws ecs run-task --cluster ${aws_ecs_cluster.this.name} --launch-type FARGATE",
    "--task-definition ${aws_ecs_task_definition.control_plane["migrate"].family}",
    "--network-configuration 'awsvpcConfiguration={subnets=[${join(",", var.private_subnet_ids)}],securityGroups=[${aws_security_group.control_plane.id}]}'",
  ])
}
